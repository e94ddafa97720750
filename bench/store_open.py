"""What opening the conversations database costs the window at start, and what one commit costs.

The window opens its store on the GUI thread before it shows itself (app/main.py), and the store runs
`PRAGMA quick_check` there (app/storage/store.py). This builds a database of --conversations
conversations of --messages messages each (--chars characters a message: a chat's usual lengths),
then times, each the median of --repeats:
  open_ms         Store(path): quick_check, the pragmas, the migration check;
  quick_check_ms  quick_check alone, on a connection of its own;
  commit_full_ms / commit_normal_ms
                  one add_message (one transaction) with synchronous=FULL (what the store uses) and
                  with NORMAL, on the same disk as --folder.
The file is warm in the OS cache after it is built, as it is when the window restarts.

    .venv/bin/python bench/store_open.py [--conversations 10000] [--messages 20] [--chars 600] [--folder DIR]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.storage.store import Store  # noqa: E402
from app.storage import tree  # noqa: E402
from report import publish  # noqa: E402


def build(path: Path, conversations: int, messages: int, chars: int) -> None:
    Store(path).close()  # the schema, as the window makes it
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("BEGIN")
    now = time.time()
    text = ("lorem ipsum dolor sit amet " * (chars // 27 + 1))[:chars]
    for c in range(conversations):
        cid = uuid.uuid4().hex
        db.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at, system_prompt, settings) VALUES (?, ?, ?, ?, '', '{}')",
            (cid, f"Conversation {c}", now, now + c),
        )
        db.executemany(
            "INSERT INTO messages (conversation_id, position, role, content, state, stats, created_at, model) VALUES (?, ?, ?, ?, 'complete', ?, ?, 'm')",
            [(cid, i, "user" if i % 2 == 0 else "assistant", text, json.dumps({"ttft_ms": 120.0}) if i % 2 else None, now) for i in range(messages)],
        )
        tree.link_as_one_path(db, cid)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def median_ms(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def quick_check(path: Path) -> None:
    db = sqlite3.connect(str(path))
    try:
        assert db.execute("PRAGMA quick_check(1)").fetchone()[0] == "ok"
    finally:
        db.close()


def commit_ms(path: Path, synchronous: str, repeats: int) -> float:
    store = Store(path)
    try:
        store._db.execute(f"PRAGMA synchronous={synchronous}")
        conv = store.create_conversation("commits")
        return median_ms(lambda: store.add_message(conv.id, "user", "x" * 600), repeats)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--chars", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folder", type=Path, default=None, help="where the database is built (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        path = Path(folder) / "conversations.sqlite3"
        build(path, args.conversations, args.messages, args.chars)
        report = {
            "conversations": args.conversations,
            "messages_each": args.messages,
            "chars_each": args.chars,
            "file_mib": round(path.stat().st_size / 2**20, 1),
            "open_ms": median_ms(lambda: Store(path).close(), args.repeats),
            "quick_check_ms": median_ms(lambda: quick_check(path), args.repeats),
            "commit_full_ms": commit_ms(path, "FULL", max(args.repeats, 20)),
            "commit_normal_ms": commit_ms(path, "NORMAL", max(args.repeats, 20)),
        }
    publish(report)


if __name__ == "__main__":
    main()
