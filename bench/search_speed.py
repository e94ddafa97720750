"""How long search takes to show its first results, on a large history (#32: under 100 ms).

Builds a database the way the window writes it (Store's schema and its FTS5 triggers, every message
inserted through them) of --conversations conversations of --messages messages each: text drawn from a
vocabulary of --vocabulary words with Zipf-like frequencies (a few words in most messages, most words in
few), --words words a message on average. Then times, on one warm read-only connection (as the search
thread has), `app.search.query.search` for each kind of query a user types, --repeats times each:

  common       a word in a large share of all messages
  rare         a word in a handful of messages
  two_words    two mid-frequency words (ANDed)
  prefix       a word being typed: its first three letters (a prefix query)
  long_prefix  a frequent long word typed but for its last letter: a prefix of 5+ letters, which the index
               keeps no prefix list for (it merges the words that begin with it once whole words run out)
  keystroke2   the first two letters of a word: the first keystrokes after the shortest prefix indexed
  none         a word no message holds
  within       Ctrl+F: a common word within one conversation

and reports each kind's median and p95 in ms, and all of them together (time to the first page: PAGE hits,
or all there are), with the time building took and the file's size.

    .venv/bin/python bench/search_speed.py [--conversations 10000] [--messages 50] [--repeats 20] [--folder DIR]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.search import query  # noqa: E402
from app.storage.store import Store, read_only_uri  # noqa: E402
from report import publish  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe", "gu", "hi", "jo", "ba", "ce", "ri", "mo", "tu"]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Made-up words of 2 to 4 syllables, none repeated; rank 0 is the most frequent."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words, key=lambda w: (len(w), w))  # short words frequent, as in natural language


def build(path: Path, conversations: int, messages: int, words: list[str], per_message: int, rng: random.Random) -> tuple[float, str]:
    Store(path).close()  # the schema and the triggers, as the window makes them
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))  # once: choices() would sum them per call
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")  # building is not what is measured
    started = time.perf_counter()
    now = time.time() - conversations * 60
    one = ""
    for c in range(conversations):
        cid = uuid.uuid4().hex
        one = one or cid
        db.execute("BEGIN")
        db.execute("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)", (cid, f"Conversation {c}", now + c * 60, now + c * 60))
        rows = []
        for i in range(messages):
            n = max(1, int(rng.expovariate(1 / per_message)))
            text = " ".join(rng.choices(words, cum_weights=cumulative, k=n)).capitalize() + "."
            rows.append((cid, i, "user" if i % 2 == 0 else "assistant", text, now + c * 60 + i))
        db.executemany("INSERT INTO messages (conversation_id, position, role, content, state, created_at) VALUES (?, ?, ?, ?, 'complete', ?)", rows)
        db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return time.perf_counter() - started, one


def document_frequency(db: sqlite3.Connection, word: str) -> int:
    return int(db.execute("SELECT count(*) FROM message_search WHERE message_search MATCH ?", (f'"{word}"',)).fetchone()[0])


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--vocabulary", type=int, default=20_000)
    parser.add_argument("--words", type=int, default=40, help="words a message, on average")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--folder", type=Path, default=None, help="where the database is built (default: a temporary folder)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    words = vocabulary(args.vocabulary, rng)
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        path = Path(folder) / "conversations.sqlite3"
        build_s, one_conversation = build(path, args.conversations, args.messages, words, args.words, rng)
        db = sqlite3.connect(read_only_uri(path), uri=True)
        mid = words[len(words) // 20: len(words) // 20 + 2]
        rare = words[-1]
        queries = {
            "common": (words[0], None),
            "rare": (rare, None),
            "two_words": (" ".join(mid), None),
            "prefix": (words[len(words) // 2][:3], None),
            "long_prefix": (next(w for w in words if len(w) >= 6)[:-1], None),
            "keystroke2": (words[len(words) // 2][:2], None),
            "none": ("xylophonequartz", None),
            "within": (words[0], one_conversation),
        }
        times: dict[str, list[float]] = {name: [] for name in queries}
        hits: dict[str, int] = {}
        for _ in range(args.repeats):
            for name, (text, conversation_id) in queries.items():
                started = time.perf_counter()
                found = query.search(db, text, conversation_id).hits
                times[name].append((time.perf_counter() - started) * 1000)
                hits[name] = len(found)
        everything = [t for values in times.values() for t in values]
        report = {
            "conversations": args.conversations,
            "messages": args.conversations * args.messages,
            "file_mib": round(path.stat().st_size / 2**20, 1),
            "build_s": round(build_s, 1),
            "page": query.PAGE,
            "repeats": args.repeats,
            "sqlite": sqlite3.sqlite_version,
            "queries": {
                name: {
                    "text": queries[name][0],
                    "messages_matching": document_frequency(db, queries[name][0].split()[0]) if name not in ("prefix", "keystroke2", "long_prefix") else None,
                    "hits_shown": hits[name],
                    "median_ms": round(statistics.median(values), 2),
                    "p95_ms": round(percentile(values, 95), 2),
                }
                for name, values in times.items()
            },
            "all_median_ms": round(statistics.median(everything), 2),
            "all_p95_ms": round(percentile(everything, 95), 2),
            "target_ms": 100,
        }
        db.close()
    publish(report)


if __name__ == "__main__":
    main()
