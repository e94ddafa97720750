"""The conversation store: SQLite (WAL) in the user data directory.

Every write is its own short transaction, so a finished message is on disk
when the call returns; the chat controller checkpoints a streaming reply
through `update_message` at least every 2 s. WAL with synchronous=NORMAL keeps
each commit well under a millisecond, which is why the GUI thread may call it.

The schema version lives in PRAGMA user_version; MIGRATIONS[i] moves a
database from version i to i+1, inside one transaction.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime.paths import data_dir

# Message states: how a message ended (or that it is still streaming).
COMPLETE = "complete"
STREAMING = "streaming"
STOPPED = "stopped"  # the user stopped it
INTERRUPTED = "interrupted"  # the runtime died, or the app did, mid-reply
FAILED = "failed"  # the runtime answered with an error

MIGRATIONS: list[str] = [
    # 0 -> 1
    """
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        system_prompt TEXT NOT NULL DEFAULT '',
        settings TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
        content TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'complete',
        stats TEXT,
        created_at REAL NOT NULL,
        UNIQUE (conversation_id, position)
    );
    CREATE INDEX conversations_by_update ON conversations(updated_at DESC);
    CREATE TABLE app_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # 1 -> 2: the model a reply came from, shown under it
    """
    ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT '';
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(RuntimeError):
    pass


def default_path() -> Path:
    return data_dir() / "conversations.sqlite3"


@dataclass
class Conversation:
    id: str
    title: str
    created_at: float
    updated_at: float
    system_prompt: str = ""
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class Message:
    id: int
    conversation_id: str
    position: int
    role: str
    content: str
    state: str = COMPLETE
    stats: dict[str, Any] | None = None
    created_at: float = 0.0
    model: str = ""


class Store:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()
        self._recover_streaming()

    def close(self) -> None:
        self._db.close()

    # ---- schema ------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(f"{self.path} was written by a newer Lokal (schema {version}, this one knows {SCHEMA_VERSION})")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            script = MIGRATIONS[target - 1]
            # executescript commits on its own; BEGIN inside it keeps the step and its version bump atomic.
            self._db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {target};\nCOMMIT;")

    def _recover_streaming(self) -> None:
        """A reply still marked streaming at open was cut off when the app (or the machine) went down."""
        self._db.execute("UPDATE messages SET state = ? WHERE state = ?", (INTERRUPTED, STREAMING))

    # ---- conversations -------------------------------------------------------
    def create_conversation(self, title: str = "New chat", system_prompt: str = "", settings: dict | None = None) -> Conversation:
        now = time.time()
        conv = Conversation(uuid.uuid4().hex, title, now, now, system_prompt, dict(settings or {}))
        self._db.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at, system_prompt, settings) VALUES (?, ?, ?, ?, ?, ?)",
            (conv.id, conv.title, conv.created_at, conv.updated_at, conv.system_prompt, json.dumps(conv.settings)),
        )
        return conv

    def conversations(self) -> list[Conversation]:
        rows = self._db.execute("SELECT * FROM conversations ORDER BY updated_at DESC").fetchall()
        return [_conversation(r) for r in rows]

    def conversation(self, conversation_id: str) -> Conversation | None:
        row = self._db.execute("SELECT * FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        return _conversation(row) if row else None

    def update_conversation(self, conversation_id: str, *, title: str | None = None, system_prompt: str | None = None, settings: dict | None = None, touch: bool = False) -> None:
        sets, args = [], []
        if title is not None:
            sets.append("title = ?")
            args.append(title)
        if system_prompt is not None:
            sets.append("system_prompt = ?")
            args.append(system_prompt)
        if settings is not None:
            sets.append("settings = ?")
            args.append(json.dumps(settings))
        if touch:
            sets.append("updated_at = ?")
            args.append(time.time())
        if sets:
            self._db.execute(f"UPDATE conversations SET {', '.join(sets)} WHERE id = ?", (*args, conversation_id))

    def delete_conversation(self, conversation_id: str) -> tuple[Conversation, list[Message]] | None:
        """Delete it; returns what was deleted, so an undo can put it back as it was."""
        conv = self.conversation(conversation_id)
        if conv is None:
            return None
        messages = self.messages(conversation_id)
        self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        return conv, messages

    def restore_conversation(self, conv: Conversation, messages: list[Message]) -> None:
        with self._transaction():
            self._db.execute(
                "INSERT INTO conversations (id, title, created_at, updated_at, system_prompt, settings) VALUES (?, ?, ?, ?, ?, ?)",
                (conv.id, conv.title, conv.created_at, conv.updated_at, conv.system_prompt, json.dumps(conv.settings)),
            )
            for m in messages:
                self._db.execute(
                    "INSERT INTO messages (id, conversation_id, position, role, content, state, stats, created_at, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (m.id, m.conversation_id, m.position, m.role, m.content, m.state, json.dumps(m.stats) if m.stats is not None else None, m.created_at, m.model),
                )

    # ---- messages ------------------------------------------------------------
    def messages(self, conversation_id: str) -> list[Message]:
        rows = self._db.execute("SELECT * FROM messages WHERE conversation_id = ? ORDER BY position", (conversation_id,)).fetchall()
        return [_message(r) for r in rows]

    def add_message(self, conversation_id: str, role: str, content: str, state: str = COMPLETE, model: str = "") -> Message:
        now = time.time()
        with self._transaction():
            (position,) = self._db.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE conversation_id = ?", (conversation_id,)).fetchone()
            cur = self._db.execute(
                "INSERT INTO messages (conversation_id, position, role, content, state, created_at, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, position, role, content, state, now, model),
            )
            self._db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
        return Message(int(cur.lastrowid), conversation_id, position, role, content, state, None, now, model)

    def update_message(self, message_id: int, *, content: str | None = None, state: str | None = None, stats: dict | None = None) -> None:
        sets, args = [], []
        if content is not None:
            sets.append("content = ?")
            args.append(content)
        if state is not None:
            sets.append("state = ?")
            args.append(state)
        if stats is not None:
            sets.append("stats = ?")
            args.append(json.dumps(stats))
        if sets:
            self._db.execute(f"UPDATE messages SET {', '.join(sets)} WHERE id = ?", (*args, message_id))

    def delete_messages_from(self, conversation_id: str, position: int) -> None:
        """Drop the message at `position` and every one after it (regenerate, edit and resend)."""
        self._db.execute("DELETE FROM messages WHERE conversation_id = ? AND position >= ?", (conversation_id, position))

    # ---- small app state (last conversation, chosen model, window geometry) ---
    def get_state(self, key: str, default: str | None = None) -> str | None:
        row = self._db.execute("SELECT value FROM app_state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_state(self, key: str, value: str | None) -> None:
        if value is None:
            self._db.execute("DELETE FROM app_state WHERE key = ?", (key,))
        else:
            self._db.execute("INSERT INTO app_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def _transaction(self):
        return _Transaction(self._db)


def open_or_set_aside(path: str | Path | None = None) -> tuple[Store, str | None]:
    """Open the store; a file SQLite cannot read is renamed (kept for the user) and a new one started."""
    target = Path(path) if path is not None else default_path()
    try:
        return Store(target), None
    except sqlite3.DatabaseError as exc:
        aside = target.with_name(f"{target.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
        target.rename(aside)
        for suffix in ("-wal", "-shm"):
            Path(str(target) + suffix).unlink(missing_ok=True)
        return Store(target), f"Your conversations file could not be read ({exc}); it was kept as {aside.name} and a new one was started."


class _Transaction:
    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __enter__(self):
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *_):
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation(row["id"], row["title"], row["created_at"], row["updated_at"], row["system_prompt"], json.loads(row["settings"] or "{}"))


def _message(row: sqlite3.Row) -> Message:
    return Message(
        row["id"], row["conversation_id"], row["position"], row["role"], row["content"], row["state"],
        json.loads(row["stats"]) if row["stats"] else None, row["created_at"], row["model"],
    )
