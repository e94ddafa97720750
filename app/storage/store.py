"""The conversation store: SQLite (WAL) in the user data directory.

Every write is its own short transaction, so a finished message is on disk
when the call returns; the chat controller checkpoints a streaming reply
through `update_message` at least every 2 s. The connection runs WAL with
synchronous=FULL: each commit syncs the WAL, so that promise holds through a
power cut or an OS crash too (NORMAL syncs only when the WAL is checkpointed
into the database, so a power cut could take back the last commits: messages
the window had shown as saved). A sync costs milliseconds (bench/store_open.py:
8 ms against 0.06 ms on a shared virtual disk), so only the streaming checkpoints,
the text of a reply still being written, commit with NORMAL: the reply's end
commits with FULL, and that sync makes every checkpoint before it durable too.
A power cut mid-reply can cost the text since the last durable commit, which
the next start marks interrupted anyway.

The schema version lives in PRAGMA user_version; MIGRATIONS[i] moves a
database from version i to i+1, inside one transaction.

Faults never cost data. A file is set aside only when SQLite proves it damaged
("file is not a database", "malformed", or a failing quick_check), and then
with its -wal and -shm, which hold the newest commits. Everything else (locked
by another program, read-only, disk full, I/O errors) is StoreUnavailable: no
file is moved, the caller says what happened and offers a retry. While the
disk refuses writes, message updates (the streaming checkpoints and a reply's
end) are kept in memory, in order, and written by `retry_deferred()` once it
works again; reads see them meanwhile.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Concatenate, ParamSpec, TypeVar, cast

from PySide6.QtCore import QT_TRANSLATE_NOOP

from app.ui.language import Context
from app.storage import attachments
from app.storage.attachments import StoredAttachment, StoredCitation
from app.storage import app_state, pending_imports, tree
from app.storage.reply_record import ReplyRecord, from_stored, to_stored
from runtime.paths import data_dir
from runtime.private_files import create_private_file, tighten_file

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
    # 2 -> 3: a reply's thinking, kept apart from its answer (#30), and how long it thought: measured by the
    # window as well as by the runtime, so "Thought for 12 s" survives a reply that ended without figures.
    # Every conversation stored the old default reply length, 512 tokens, which cut thinking replies before
    # their answer: it becomes "until the model stops" (null), the new default.
    """
    ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
    ALTER TABLE messages ADD COLUMN thinking_ms REAL NOT NULL DEFAULT 0;
    UPDATE conversations SET settings = json_set(settings, '$.max_tokens', json('null'))
        WHERE json_valid(settings) AND json_extract(settings, '$.max_tokens') = 512;
    """,
    # 3 -> 4: search through every message (app/search). An FTS5 index over messages.content only (a reply's
    # reasoning is not searched), reading its text from the messages table (external content: no second copy),
    # kept in step by triggers, so every writer (the window, an import, an undo) keeps it right; built here for
    # the messages already there. The table's rows, not a conversation's path: every branch is searched.
    """
    CREATE VIRTUAL TABLE message_search USING fts5(
        content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2', prefix='2 3'
    );
    INSERT INTO message_search(message_search) VALUES ('rebuild');
    CREATE TRIGGER message_search_insert AFTER INSERT ON messages BEGIN
        INSERT INTO message_search(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER message_search_delete AFTER DELETE ON messages BEGIN
        INSERT INTO message_search(message_search, rowid, content) VALUES ('delete', old.id, old.content);
    END;
    CREATE TRIGGER message_search_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO message_search(message_search, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO message_search(rowid, content) VALUES (new.id, new.content);
    END;
    """,
    # 4 -> 5: presets (app/presets): a system prompt and sampling settings, optionally a model file and its
    # load settings; the built-in ones live in the code (translated), not here. JSON columns are checked by
    # app/presets/preset.py on the way in and on the way out.
    """
    CREATE TABLE presets (
        name TEXT PRIMARY KEY COLLATE NOCASE,
        system_prompt TEXT NOT NULL DEFAULT '',
        sampling TEXT NOT NULL DEFAULT '{}',
        model TEXT NOT NULL DEFAULT '',
        load_settings TEXT,
        created_at REAL NOT NULL
    );
    """,
    # 5 -> 6: messages as a tree (app/storage/tree.py). `position` stays unique, now a number in the order the
    # conversation's messages were written; `depth` is a message's index along its path. A version 2 conversation is one path, whose
    # positions run 0..n-1 (messages were only ever cut from the end), so each message's parent is the one
    # before it and its depth is its position. Columns are added, not the table rebuilt: what other
    # migrations added to `messages` (and whatever refers to it) stays as it is.
    """
    ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id);
    ALTER TABLE messages ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE conversations ADD COLUMN selected_leaf INTEGER;
    UPDATE messages SET depth = position,
        parent_id = (SELECT p.id FROM messages p WHERE p.conversation_id = messages.conversation_id AND p.position = messages.position - 1);
    UPDATE conversations SET selected_leaf =
        (SELECT m.id FROM messages m WHERE m.conversation_id = conversations.id ORDER BY m.position DESC LIMIT 1);
    CREATE INDEX messages_by_parent ON messages(parent_id);
    CREATE INDEX messages_siblings ON messages(conversation_id, parent_id);
    """,
    # 6 -> 7: a message's attachments (chips, thumbnails), a reply's citations, the Documents list
    attachments.MIGRATION,
    # 7 -> 8: an attachment's and a citation's figures, so the window says them in its own language
    attachments.PLACES_MIGRATION,
]
SCHEMA_VERSION = len(MIGRATIONS)
# How long a statement waits for another connection's lock: short, because the window writes on its GUI thread.
BUSY_TIMEOUT_S = 2.0
# An import (`lokal import`, in a process of its own) beside the window: transactions this long, this far apart
# (add_conversations), so that a write of the window's waits for the lock a few tens of milliseconds at most.
IMPORT_BATCH_S = 0.05
IMPORT_PAUSE_S = 0.025
BESIDE_WINDOW_BUSY_TIMEOUT_S = 30.0  # such a process has no window to keep live: it waits out the window's writes

log = logging.getLogger("lokal.storage")
P = ParamSpec("P")
R = TypeVar("R")


class WriteStopped(Exception):
    """Store.add_conversations was asked to stop: nothing of what it wrote is kept."""


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Lokal: this one must not touch it."""

    def __init__(self, path: Path, found: int, known: int):
        super().__init__(f"{path} was written by a newer Lokal (schema {found}, this one knows {known})")
        self.path = path
        self.found = found
        self.known = known


StoreFaults = Context("StoreFaults")

# What each kind of fault means to the user, and what they can do about it (translated when shown).
# (QT_TRANSLATE_NOOP returns its text; PySide6's stubs type it `object`.)
FAULTS = cast(dict[str, tuple[str, str]], {
    "locked": (
        QT_TRANSLATE_NOOP("StoreFaults", "Your conversations database is in use by another program (the database is locked)."),
        QT_TRANSLATE_NOOP("StoreFaults", "Close any other program that has it open (a backup or sync tool, or another copy of Lokal), then retry."),
    ),
    "readonly": (
        QT_TRANSLATE_NOOP("StoreFaults", "Lokal cannot write to its conversations database: the file or its folder is read-only."),
        QT_TRANSLATE_NOOP("StoreFaults", "Make the folder writable again (check its permissions, or whether the drive was mounted read-only), then retry."),
    ),
    "disk_full": (
        QT_TRANSLATE_NOOP("StoreFaults", "The disk that holds your conversations is full."),
        QT_TRANSLATE_NOOP("StoreFaults", "Free some space on it, then retry. Nothing is lost meanwhile: what could not be saved is kept until it can be."),
    ),
    "io_error": (
        QT_TRANSLATE_NOOP("StoreFaults", "The disk reported an error while reading or writing your conversations (disk I/O error)."),
        QT_TRANSLATE_NOOP("StoreFaults", "Check the drive (was it unplugged, or is it failing?), then retry."),
    ),
    "cannot_open": (
        QT_TRANSLATE_NOOP("StoreFaults", "Lokal cannot open its conversations database."),
        QT_TRANSLATE_NOOP("StoreFaults", "Check that the data folder exists and that you may write to it, then retry."),
    ),
    "corrupt": (
        QT_TRANSLATE_NOOP("StoreFaults", "Your conversations database was found damaged while Lokal was running."),
        QT_TRANSLATE_NOOP("StoreFaults", "Quit and start Lokal again: it keeps the damaged file aside, with everything it holds, and starts a new one."),
    ),
    "unknown": (QT_TRANSLATE_NOOP("StoreFaults", "Lokal could not use its conversations database."), QT_TRANSLATE_NOOP("StoreFaults", "Retry; if it keeps failing, the log folder (Help menu) has the details.")),
})


class StoreUnavailable(RuntimeError):
    """The database cannot be used right now, and nothing says its contents are damaged: no file was touched."""

    def __init__(self, kind: str, path: Path, detail: str):
        what, advice = FAULTS.get(kind, FAULTS["unknown"])
        super().__init__(f"{what} ({detail})")
        self.kind = kind
        self.path = path
        self.detail = detail
        self.what = what
        self.advice = advice

    @property
    def message(self) -> str:
        """What happened and what to do, in words for the user (in the window's language)."""
        return f"{StoreFaults.tr(self.what)} {StoreFaults.tr(self.advice)}\n({self.detail}; {self.path})"


_KINDS = {
    sqlite3.SQLITE_BUSY: "locked",
    sqlite3.SQLITE_LOCKED: "locked",
    sqlite3.SQLITE_READONLY: "readonly",
    sqlite3.SQLITE_PERM: "readonly",
    sqlite3.SQLITE_IOERR: "io_error",
    sqlite3.SQLITE_FULL: "disk_full",
    sqlite3.SQLITE_CANTOPEN: "cannot_open",
    sqlite3.SQLITE_CORRUPT: "corrupt",
    sqlite3.SQLITE_NOTADB: "corrupt",
}


class DatabaseDamaged(sqlite3.DatabaseError):
    """SQLite's own integrity check found damage: the one case besides "not a database" that sets a file aside."""


def fault_kind(exc: sqlite3.Error) -> str:
    """Which kind of fault an sqlite3 error is, from SQLite's own (primary) result code."""
    if isinstance(exc, DatabaseDamaged):
        return "corrupt"
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return "unknown"
    return _KINDS.get(code & 0xFF, "unknown")


SQLITE_HEADER = b"SQLite format 3\x00"


def _make_private(path: Path) -> None:
    """The database is the user's alone (0600), and so are its -wal and -shm: SQLite gives them the
    database file's mode, so the file is created 0600 before SQLite opens it, and an older Lokal's
    0644 files are tightened (runtime/private_files.py)."""
    try:
        create_private_file(path)
    except OSError:
        return  # a folder we cannot write: SQLite's own error says so, classified as any other
    for name in (path.name, path.name + "-wal", path.name + "-shm", path.name + "-journal"):
        tighten_file(path.with_name(name))


def _check_header(path: Path) -> None:
    """A file whose header is not SQLite's is refused before SQLite opens it.

    SQLite itself would say "file is not a database", but on the way it deletes the file's -wal, and
    the newest commits with it; checked here, the -wal is still there to be set aside with the file.
    """
    try:
        with open(path, "rb") as f:
            header = f.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise sqlite3.OperationalError(f"cannot read {path.name}: {exc}") from exc  # classified as unknown: not moved
    if header and header != SQLITE_HEADER:
        raise DatabaseDamaged("file is not a database (its first bytes are not SQLite's header)")


def _guarded(method: Callable[Concatenate[Store, P], R]) -> Callable[Concatenate[Store, P], R]:
    """sqlite3 errors leave a Store method as StoreUnavailable, which says what happened in words."""

    @functools.wraps(method)
    def guarded(self: Store, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise StoreUnavailable(fault_kind(exc), self.path, str(exc)) from exc

    return guarded


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
    selected_leaf: int | None = None  # the last message of the path on screen (None: no messages)


@dataclass
class Message:
    id: int
    conversation_id: str
    position: int
    role: str
    content: str
    state: str = COMPLETE
    record: ReplyRecord | None = None  # a reply's figures, finish reason or error (the `stats` column: reply_record.py)
    created_at: float = 0.0
    model: str = ""
    reasoning: str = ""  # a reply's thinking, shown folded above the answer; never part of `content`
    thinking_ms: float = 0.0  # how long it thought (0: it did not, or is still thinking)
    attachments: list[StoredAttachment] = field(default_factory=list)  # the files sent with it (app/storage/attachments.py)
    citations: list[StoredCitation] = field(default_factory=list)  # a reply's: the document chunks it was given
    parent_id: int | None = None  # None: a first message (a conversation may have several: edits of it)
    depth: int = 0  # its index along its path: 0 for a first message
    branch: int = 1  # 1-based, among its siblings (the messages with the same parent) in the order written
    branches: int = 1  # how many siblings it has, itself included: ◀ branch/branches ▶ when more than one


# add_message's default parent: the conversation's selected leaf.
SELECTED_LEAF = object()


@dataclass
class DeletedBranch:
    """What Store.delete_branch took away, for an undo: the messages (in the order written) and the leaf selected before."""

    conversation_id: str
    messages: list[Message]
    selected_leaf: int | None


@dataclass
class TreeMessage:
    """A message to write with a new conversation (an import): `parent` is the index of an earlier one in the list."""

    role: str
    content: str
    parent: int | None
    created_at: float
    state: str = COMPLETE
    model: str = ""
    record: ReplyRecord | None = None
    reasoning: str = ""
    thinking_ms: float = 0.0
    # The files it was sent with, as an export names them (no bytes): linked only if this database keeps them (_write_tree).
    attachments: list[StoredAttachment] = field(default_factory=list)
    citations: list[StoredCitation] = field(default_factory=list)


@dataclass
class NewConversation:
    """A whole conversation to write at once (an import); `key` names its content, so a second import skips it."""

    title: str
    created_at: float
    updated_at: float
    messages: list[TreeMessage]
    selected: int | None  # the index of the selected leaf; None: the newest message
    key: str
    system_prompt: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    # The keys an earlier Lokal gave the same content, where it read the file otherwise: what it imported is skipped too.
    earlier_keys: list[str] = field(default_factory=list)


IMPORTED_KEY = "imported:"  # app_state: IMPORTED_KEY + a NewConversation's key -> the conversation it became


@dataclass
class _PendingUpdate:
    """A message update the database has not taken yet: the newest value of each field (None: unchanged)."""

    content: str | None = None
    state: str | None = None
    record: ReplyRecord | None = None
    reasoning: str | None = None
    thinking_ms: float | None = None

    def merge(self, content: str | None, state: str | None, record: ReplyRecord | None, reasoning: str | None = None, thinking_ms: float | None = None) -> None:
        self.content = content if content is not None else self.content
        self.state = state if state is not None else self.state
        self.record = record if record is not None else self.record
        self.reasoning = reasoning if reasoning is not None else self.reasoning
        self.thinking_ms = thinking_ms if thinking_ms is not None else self.thinking_ms


class Store:
    def __init__(self, path: str | Path | None = None, *, beside_window: bool = False):
        """Open (or create) the database; raises sqlite3.Error or SchemaTooNew with the connection closed again.

        `beside_window`: a second process writes while a window may have the file open (`lokal import`): a reply
        marked streaming may be one that window streams now, so it is left as it is, not marked interrupted."""
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._deferred: dict[int, _PendingUpdate] = {}  # message id -> the fields an update could not write yet
        self.problem: StoreUnavailable | None = None  # why writes fail now; None while they work
        self._problem_listeners: list[Callable[[StoreUnavailable | None], None]] = []
        _check_header(self.path)
        _make_private(self.path)
        # Opened on a worker thread at start (app/storage/startup.py), used on the GUI thread after: one thread at a time.
        waits = BESIDE_WINDOW_BUSY_TIMEOUT_S if beside_window else BUSY_TIMEOUT_S
        self._db = sqlite3.connect(str(self.path), isolation_level=None, timeout=waits, check_same_thread=False)
        try:
            self._db.row_factory = sqlite3.Row
            self._refuse_newer_schema()  # before anything writes: a newer Lokal's file stays exactly as it is
            self._check_integrity()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # see the module docstring
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
            self._undo_abandoned_imports()
            if not beside_window:
                self._recover_streaming()
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self._db.close()

    # ---- schema ------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _refuse_newer_schema(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(self.path, version, SCHEMA_VERSION)

    def _check_integrity(self) -> None:
        """Damage found now is found before anything new is written into a damaged file."""
        (verdict,) = self._db.execute("PRAGMA quick_check(1)").fetchone()
        if verdict != "ok":
            raise DatabaseDamaged(f"quick_check: {verdict}")

    def _migrate(self) -> None:
        version = self.schema_version
        for target in range(version + 1, SCHEMA_VERSION + 1):
            script = MIGRATIONS[target - 1]
            # executescript commits on its own; BEGIN inside it keeps the step and its version bump atomic.
            self._db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {target};\nCOMMIT;")

    def _recover_streaming(self) -> None:
        """A reply still marked streaming at open was cut off when the app (or the machine) went down."""
        self._db.execute("UPDATE messages SET state = ? WHERE state = ?", (INTERRUPTED, STREAMING))

    # ---- conversations -------------------------------------------------------
    @_guarded
    def create_conversation(self, title: str = "New chat", system_prompt: str = "", settings: dict | None = None) -> Conversation:
        now = time.time()
        conv = Conversation(uuid.uuid4().hex, title, now, now, system_prompt, dict(settings or {}))
        self._db.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at, system_prompt, settings) VALUES (?, ?, ?, ?, ?, ?)",
            (conv.id, conv.title, conv.created_at, conv.updated_at, conv.system_prompt, json.dumps(conv.settings)),
        )
        return conv

    @_guarded
    def conversations(self) -> list[Conversation]:
        rows = self._db.execute(
            "SELECT * FROM conversations WHERE id NOT IN (" + pending_imports.HIDDEN + ") ORDER BY updated_at DESC"  # nosec B608: constants only
        ).fetchall()
        return [_conversation(r) for r in rows]

    @_guarded
    def conversation(self, conversation_id: str) -> Conversation | None:
        row = self._db.execute("SELECT * FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        return _conversation(row) if row else None

    @_guarded
    def update_conversation(self, conversation_id: str, *, title: str | None = None, system_prompt: str | None = None, settings: dict | None = None, touch: bool = False) -> None:
        values = (title, system_prompt, json.dumps(settings) if settings is not None else None, time.time() if touch else None)
        if all(v is None for v in values):
            return
        # One fixed statement (no SQL built from strings): a field given as NULL keeps its value.
        self._db.execute(
            "UPDATE conversations SET title = COALESCE(?, title), system_prompt = COALESCE(?, system_prompt), "
            "settings = COALESCE(?, settings), updated_at = COALESCE(?, updated_at) WHERE id = ?",
            (*values, conversation_id),
        )

    @_guarded
    def delete_conversation(self, conversation_id: str) -> tuple[Conversation, list[Message]] | None:
        """Delete it; returns what was deleted, so an undo can put it back as it was."""
        conv = self.conversation(conversation_id)
        if conv is None:
            return None
        messages = self.all_messages(conversation_id)
        self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        return conv, messages

    @_guarded
    def restore_conversation(self, conv: Conversation, messages: list[Message]) -> None:
        """Put back what delete_conversation returned: every branch, and the path that was on screen."""
        with self._transaction():
            self._db.execute(
                "INSERT INTO conversations (id, title, created_at, updated_at, system_prompt, settings, selected_leaf) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (conv.id, conv.title, conv.created_at, conv.updated_at, conv.system_prompt, json.dumps(conv.settings), conv.selected_leaf),
            )
            self._insert_messages(messages)

    def _insert_messages(self, messages: list[Message]) -> None:
        """Rows as they were, ids included (they keep their places among siblings); parents before children (a
        parent has the smaller id). A position written meanwhile (a message sent after a delete) gets a new one."""
        for m in sorted(messages, key=lambda m: m.id):
            (taken,) = self._db.execute("SELECT COUNT(*) FROM messages WHERE conversation_id = ? AND position = ?", (m.conversation_id, m.position)).fetchone()
            position = m.position
            if taken:
                (position,) = self._db.execute("SELECT MAX(position) + 1 FROM messages WHERE conversation_id = ?", (m.conversation_id,)).fetchone()
            self._db.execute(
                "INSERT INTO messages (id, conversation_id, position, role, content, state, stats, created_at, model, parent_id, depth, reasoning, thinking_ms) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (m.id, m.conversation_id, position, m.role, m.content, m.state, to_stored(m.record), m.created_at, m.model, m.parent_id, m.depth, m.reasoning, m.thinking_ms),
            )
            attachments.link(self._db, m.id, m.attachments, used=False)
            attachments.save_citations(self._db, m.id, m.citations)

    # ---- messages ------------------------------------------------------------
    @_guarded
    def messages(self, conversation_id: str, *, since: int = 0, before: int | None = None, newest: int | None = None) -> list[Message]:
        """The selected path's messages in order: those at depth `since` or more and below `before`; only the
        `newest` of them if given (a long conversation is read a part at a time, upwards from its leaf)."""
        rows = tree.path_rows(self._db, conversation_id, since, before, newest)
        return self._with_attached([self._with_deferred(_message(r)) for r in rows])

    def _with_attached(self, messages: list[Message]) -> list[Message]:
        """The messages with their attachments and citations (two queries, whatever their number)."""
        ids = [m.id for m in messages]
        attached, cited = attachments.attachments_of(self._db, ids), attachments.citations_of(self._db, ids)
        for m in messages:
            m.attachments = attached.get(m.id, [])
            m.citations = cited.get(m.id, [])
        return messages

    @_guarded
    def save_citations(self, message_id: int, citations: list[StoredCitation]) -> None:
        with self._transaction():
            attachments.save_citations(self._db, message_id, citations)

    @_guarded
    def remember_attachment(self, attachment: StoredAttachment) -> None:
        """Keep an attachment's row before any message refers to it (a document attached, not sent yet, is in the Documents list)."""
        attachments.remember(self._db, attachment)

    @_guarded
    def documents(self) -> list[StoredAttachment]:
        return attachments.documents(self._db)

    @_guarded
    def image_bytes(self, attachment_id: str) -> bytes | None:
        return attachments.image_bytes(self._db, attachment_id)

    @_guarded
    def all_messages(self, conversation_id: str) -> list[Message]:
        """Every message of every branch, in the order they were written (an export of the tree, an undo)."""
        rows = self._db.execute(
            f"SELECT m.*, {tree.BRANCH_COLUMNS} FROM messages m WHERE m.conversation_id = ? ORDER BY m.id", (conversation_id,)  # nosec B608: the query's text is this module's constants (tree.py's columns and CTEs); every value is bound
        ).fetchall()
        return self._with_attached([self._with_deferred(_message(r)) for r in rows])

    @_guarded
    def turns(self, conversation_id: str, since: int = 0) -> list[tuple[str, str, str, str, list[StoredAttachment]]]:
        """(role, content, state, reasoning, attachments) of the selected path's messages at depth `since` and after:
        what a reply's prompt is made of, without the rest of each row (a long conversation's history is read on the
        GUI thread, in one walk of the path). The reasoning goes to the runtime apart from the answer: the model's
        template keeps it or (most) drop it."""
        rows = tree.path_rows(self._db, conversation_id, since, None, None, branches=False)
        attached = attachments.attachments_of(self._db, [row["id"] for row in rows])
        out = []
        for row in rows:
            message_id, role, content, state, reasoning = row["id"], row["role"], row["content"], row["state"], row["reasoning"]
            deferred = self._deferred.get(message_id)
            if deferred is not None:
                content, state = deferred.content if deferred.content is not None else content, deferred.state or state
                reasoning = deferred.reasoning if deferred.reasoning is not None else reasoning
            out.append((role, content, state, reasoning, attached.get(message_id, [])))
        return out

    @_guarded
    def message(self, message_id: int) -> Message | None:
        row = self._db.execute(f"SELECT m.*, {tree.BRANCH_COLUMNS} FROM messages m WHERE m.id = ?", (message_id,)).fetchone()  # nosec B608: the query's text is this module's constants (tree.py's columns and CTEs); every value is bound
        return self._with_attached([self._with_deferred(_message(row))])[0] if row else None

    @_guarded
    def message_count(self, conversation_id: str) -> int:
        """Messages on the selected path (0 for none)."""
        leaf = tree.leaf_of(self._db, conversation_id)
        return leaf[1] + 1 if leaf else 0

    @_guarded
    def add_message(
        self, conversation_id: str, role: str, content: str, state: str = COMPLETE, model: str = "", *, parent_id: int | None | object = SELECTED_LEAF,
        attached: list[StoredAttachment] | None = None,
    ) -> Message:
        """A message under `parent_id` (by default the selected leaf: the end of the path on screen; None: a new
        first message). It becomes the selected leaf: the path on screen now ends with it. `attached`: the files
        sent with it, kept in the same transaction."""
        now = time.time()
        with self._transaction():
            if parent_id is SELECTED_LEAF:
                leaf = tree.leaf_of(self._db, conversation_id)
                parent, depth = (leaf[0], leaf[1] + 1) if leaf else (None, 0)
            elif parent_id is None:
                parent, depth = None, 0
            else:
                row = self._db.execute("SELECT id, depth FROM messages WHERE id = ? AND conversation_id = ?", (parent_id, conversation_id)).fetchone()
                if row is None:
                    raise ValueError(f"parent_id {parent_id} is no message of conversation {conversation_id}")
                parent, depth = row[0], row[1] + 1
            (position,) = self._db.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE conversation_id = ?", (conversation_id,)).fetchone()
            cur = self._db.execute(
                "INSERT INTO messages (conversation_id, position, role, content, state, created_at, model, parent_id, depth) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, position, role, content, state, now, model, parent, depth),
            )
            assert cur.lastrowid is not None  # an INSERT's row
            attachments.link(self._db, cur.lastrowid, attached or [], now)
            self._db.execute("UPDATE conversations SET updated_at = ?, selected_leaf = ? WHERE id = ?", (now, cur.lastrowid, conversation_id))
            siblings = len(tree.sibling_ids(self._db, conversation_id, parent))
        return Message(cur.lastrowid, conversation_id, position, role, content, state, None, now, model, parent_id=parent, depth=depth, branch=siblings, branches=siblings,
                       attachments=[dataclasses.replace(a, image=b"") for a in attached or []])

    # ---- branches (app/storage/tree.py) ----------------------------------------
    @_guarded
    def siblings(self, message_id: int) -> list[Message]:
        """The message and the others with the same parent, in the order they were written (by id)."""
        row = self._db.execute("SELECT conversation_id, parent_id FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            return []
        ids = tree.sibling_ids(self._db, row[0], row[1])
        return [m for m in (self.message(i) for i in ids) if m is not None]

    @_guarded
    def path_ids(self, conversation_id: str) -> list[int]:
        """The ids of the selected path, first message to leaf."""
        leaf = tree.leaf_of(self._db, conversation_id)
        return tree.path_ids(self._db, leaf[0]) if leaf else []

    @_guarded
    def set_selected_leaf(self, conversation_id: str, message_id: int | None) -> None:
        """End the selected path exactly at `message_id` (None: an empty path), whether or not it has children
        (a regenerated reply is written beside the old one: the path ends at their parent meanwhile)."""
        self._db.execute("UPDATE conversations SET selected_leaf = ? WHERE id = ?", (message_id, conversation_id))

    @_guarded
    def select_branch(self, message_id: int) -> int | None:
        """Put `message_id` on the selected path; the path goes on to the newest leaf under it. Returns that
        leaf (None if there is no such message)."""
        row = self._db.execute("SELECT conversation_id FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            return None
        return self.select_leaf_through(row[0], message_id)

    @_guarded
    def select_leaf_through(self, conversation_id: str, message_id: int) -> int | None:
        """As select_branch, for a message known to be in `conversation_id` (a search result); None if it is not."""
        with self._transaction():
            found = self._db.execute("SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?", (message_id, conversation_id)).fetchone()
            if found is None:
                return None
            leaf = tree.newest_leaf_under(self._db, conversation_id, message_id)
            self._db.execute("UPDATE conversations SET selected_leaf = ? WHERE id = ?", (leaf, conversation_id))
        return leaf

    @_guarded
    def delete_branch(self, message_id: int) -> DeletedBranch | None:
        """Delete `message_id` and everything under it; returns what was deleted, for restore_branch (an undo).
        If the selected path went through it, the path moves to the sibling before it (else the one after it,
        else its parent)."""
        with self._transaction():
            row = self._db.execute("SELECT conversation_id, parent_id FROM messages WHERE id = ?", (message_id,)).fetchone()
            if row is None:
                return None
            conversation_id, parent_id = row[0], row[1]
            (selected,) = self._db.execute("SELECT selected_leaf FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
            ids = tree.subtree_ids(self._db, conversation_id, message_id)
            messages = [m for m in (self.message(i) for i in ids) if m is not None]
            siblings = tree.sibling_ids(self._db, conversation_id, parent_id)
            at = siblings.index(message_id)
            others = siblings[:at][::-1] + siblings[at + 1:]
            # Children first: each row's parent is still there when the foreign key is checked.
            self._db.executemany("DELETE FROM messages WHERE id = ?", [(i,) for i in reversed(ids)])
            if selected in ids:
                leaf = tree.newest_leaf_under(self._db, conversation_id, others[0]) if others else parent_id
                self._db.execute("UPDATE conversations SET selected_leaf = ? WHERE id = ?", (leaf, conversation_id))
        return DeletedBranch(conversation_id, messages, selected)

    @_guarded
    def restore_branch(self, deleted: DeletedBranch) -> None:
        """Put a deleted branch back; if the path on screen went through it then, it does again (else the path
        stays as it is now: its old leaf may have had replies since)."""
        with self._transaction():
            self._insert_messages(deleted.messages)
            if deleted.selected_leaf in {m.id for m in deleted.messages}:
                self._db.execute("UPDATE conversations SET selected_leaf = ? WHERE id = ?", (deleted.selected_leaf, deleted.conversation_id))

    def update_message(
        self, message_id: int, *, content: str | None = None, state: str | None = None, record: ReplyRecord | None = None,
        reasoning: str | None = None, thinking_ms: float | None = None,
    ) -> None:
        """Set a message's fields (None: left as it is). If the database refuses the write, it is kept and retried: see retry_deferred."""
        if content is None and state is None and record is None and reasoning is None and thinking_ms is None:
            return
        self._deferred.setdefault(message_id, _PendingUpdate()).merge(content, state, record, reasoning, thinking_ms)
        self.retry_deferred()

    @property
    def deferred_writes(self) -> int:
        """Message updates waiting for the database to take them."""
        return len(self._deferred)

    def retry_deferred(self) -> bool:
        """Write every kept message update, in one transaction; True once nothing is left waiting."""
        if not self._deferred:
            self._set_problem(None)
            return True
        try:
            with self._synchronous("NORMAL" if self._only_streaming_text() else "FULL"), self._transaction():
                for message_id, pending in self._deferred.items():
                    self._db.execute(
                        "UPDATE messages SET content = COALESCE(?, content), state = COALESCE(?, state), stats = COALESCE(?, stats), "
                        "reasoning = COALESCE(?, reasoning), thinking_ms = COALESCE(?, thinking_ms) WHERE id = ?",
                        (pending.content, pending.state, to_stored(pending.record), pending.reasoning, pending.thinking_ms, message_id),
                    )
        except sqlite3.Error as exc:
            problem = StoreUnavailable(fault_kind(exc), self.path, str(exc))
            log.warning("%d message update(s) kept in memory: %s", len(self._deferred), problem)
            self._set_problem(problem)
            return False
        self._deferred.clear()
        self._set_problem(None)
        return True

    def _only_streaming_text(self) -> bool:
        """Whether the kept updates are streaming checkpoints only: new text of replies still marked streaming."""
        for message_id, pending in self._deferred.items():
            if pending.state is not None or pending.record is not None:
                return False
            row = self._db.execute("SELECT state FROM messages WHERE id = ?", (message_id,)).fetchone()
            if row is None or row["state"] != STREAMING:
                return False
        return True

    @contextlib.contextmanager
    def _synchronous(self, level: str):
        """Commits inside run with synchronous=`level` ("NORMAL" or "FULL"); the connection is FULL again after."""
        self._db.execute("PRAGMA synchronous=NORMAL" if level == "NORMAL" else "PRAGMA synchronous=FULL")
        try:
            yield
        finally:
            self._db.execute("PRAGMA synchronous=FULL")

    def on_problem_changed(self, listener: Callable[[StoreUnavailable | None], None]) -> None:
        """`listener(problem)` whenever writes start failing (a StoreUnavailable) or work again (None)."""
        self._problem_listeners.append(listener)

    def _set_problem(self, problem: StoreUnavailable | None) -> None:
        changed = (problem is None) != (self.problem is None) or (problem is not None and self.problem is not None and problem.kind != self.problem.kind)
        self.problem = problem
        if changed:
            for listener in list(self._problem_listeners):
                listener(problem)

    def _with_deferred(self, message: Message) -> Message:
        pending = self._deferred.get(message.id)
        if pending is not None:
            message.content = pending.content if pending.content is not None else message.content
            message.state = pending.state or message.state
            message.record = pending.record or message.record
            message.reasoning = pending.reasoning if pending.reasoning is not None else message.reasoning
            message.thinking_ms = pending.thinking_ms if pending.thinking_ms is not None else message.thinking_ms
        return message

    # ---- imports ---------------------------------------------------------------
    @_guarded
    def add_conversations(
        self, items: list[NewConversation], on_progress: Callable[[int, int], None] | None = None, should_stop: Callable[[], bool] | None = None,
    ) -> tuple[list[Conversation], list[NewConversation], set[str]]:
        """Write whole conversations: all of them or, if anything fails, none. One whose key (or one of its
        earlier_keys) an earlier import wrote, and that conversation is still here, is skipped. Returns (added,
        skipped, and the ids of the attachments they name that this database does not keep: those are not attached).

        Written in transactions of about IMPORT_BATCH_S each, with IMPORT_PAUSE_S between them for another
        writer (the window) to take the lock; what is written stays hidden until the last one (pending_imports).
        `on_progress(done, total)` after each of them: how many of the conversations are written or skipped.
        `should_stop()`, asked before each: True stops the import (WriteStopped), and what it wrote goes again."""
        added: list[Conversation] = []
        skipped: list[NewConversation] = []
        not_found: set[str] = set()
        with self._transaction():
            key = pending_imports.begin(self._db)
        try:
            rest = iter(items)
            item = next(rest, None)
            while item is not None:
                if added or skipped:
                    time.sleep(IMPORT_PAUSE_S)  # not a poll: the lock is free for this long, for the window's writes
                if should_stop is not None and should_stop():
                    raise WriteStopped("the import was stopped")
                began = time.monotonic()
                with self._transaction():
                    batch: list[Conversation] = []
                    while item is not None and (not batch or time.monotonic() - began < IMPORT_BATCH_S):
                        if self._imported_before(item):
                            skipped.append(item)
                        else:
                            batch.append(self._write_tree(item, not_found))
                        item = next(rest, None)
                    pending_imports.add(self._db, key, [c.id for c in batch])
                added += batch
                if on_progress is not None:
                    on_progress(len(added) + len(skipped), len(items))
            with self._transaction():
                pending_imports.finish(self._db, key)
        except BaseException:
            self._undo_import(key)
            raise
        return added, skipped, not_found

    def _imported_before(self, item: NewConversation) -> bool:
        return any(
            self._db.execute(
                "SELECT COUNT(*) FROM app_state s JOIN conversations c ON c.id = s.value WHERE s.key = ?", (IMPORTED_KEY + key,)
            ).fetchone()[0]
            for key in (item.key, *item.earlier_keys)
        )

    def _undo_import(self, key: str) -> None:
        """What an import wrote goes again; if the database refuses even that, the next Store to open does it."""
        try:
            self._undo_in_batches(key)
        except sqlite3.Error:
            log.exception("undoing an import that failed midway; it is undone when the store is next opened")

    def _undo_in_batches(self, key: str) -> None:
        """Delete an import's conversations in transactions as short and as far apart as its writes."""
        done = False
        while not done:
            began = time.monotonic()
            with self._transaction():
                done = pending_imports.undo_some(self._db, key, lambda: time.monotonic() - began >= IMPORT_BATCH_S)
            if not done:
                time.sleep(IMPORT_PAUSE_S)

    def _undo_abandoned_imports(self) -> None:
        """Imports whose process died midway (pending_imports): what they wrote was never shown, and goes. A
        database that refuses it now is opened all the same (that stays hidden): the next open tries again."""
        try:
            for key in pending_imports.abandoned(self._db):
                log.warning("an import ended midway (its process is gone): undoing what it wrote")
                self._undo_in_batches(key)
        except sqlite3.Error as exc:
            log.warning("what an import that ended midway wrote is left for the next start: %s", exc)

    def _write_tree(self, item: NewConversation, not_found: set[str]) -> Conversation:
        """Write the conversation; adds to `not_found` the attachments it names that this database does not keep.

        An attachment is linked only as this database keeps it (its row, with its size in tokens and thumbnail:
        an export has neither). One it does not keep is left out: its bytes are in no runtime store here, and a
        message that names it would make every later reply in the conversation fail ("not stored here")."""
        conv = Conversation(uuid.uuid4().hex, item.title, item.created_at, item.updated_at, item.system_prompt, dict(item.settings))
        self._db.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at, system_prompt, settings) VALUES (?, ?, ?, ?, ?, ?)",
            (conv.id, conv.title, conv.created_at, conv.updated_at, conv.system_prompt, json.dumps(conv.settings)),
        )
        ids: list[int] = []
        depths: list[int] = []
        for position, m in enumerate(item.messages):
            if m.parent is not None and not 0 <= m.parent < position:
                raise ValueError(f"message {position}'s parent {m.parent} is not an earlier message")
            parent_id, depth = (ids[m.parent], depths[m.parent] + 1) if m.parent is not None else (None, 0)
            cur = self._db.execute(
                "INSERT INTO messages (conversation_id, position, role, content, state, stats, created_at, model, parent_id, depth, reasoning, thinking_ms) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (conv.id, position, m.role, m.content, m.state, to_stored(m.record), m.created_at, m.model, parent_id, depth, m.reasoning, m.thinking_ms),
            )
            assert cur.lastrowid is not None
            # Only messages that have them cost queries: an import may write a million messages, nearly all without.
            if m.attachments:
                kept = attachments.stored(self._db, [a.id for a in m.attachments])
                attachments.link(self._db, cur.lastrowid, [kept[a.id] for a in m.attachments if a.id in kept], used=False)
                not_found.update(a.id for a in m.attachments if a.id not in kept)
            if m.citations:
                attachments.save_citations(self._db, cur.lastrowid, m.citations)  # each carries its text: it needs no file
            ids.append(cur.lastrowid)
            depths.append(depth)
        if ids:
            conv.selected_leaf = ids[item.selected] if item.selected is not None else ids[-1]
            self._db.execute("UPDATE conversations SET selected_leaf = ? WHERE id = ?", (conv.selected_leaf, conv.id))
        app_state.put(self._db, IMPORTED_KEY + item.key, conv.id)
        return conv

    # ---- small app state (last conversation, chosen model, window geometry) ---
    @_guarded
    def get_state(self, key: str, default: str | None = None) -> str | None:
        row = self._db.execute("SELECT value FROM app_state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    @_guarded
    def set_state(self, key: str, value: str | None) -> None:
        if value is None:
            self._db.execute("DELETE FROM app_state WHERE key = ?", (key,))
        else:
            app_state.put(self._db, key, value)

    def _transaction(self):
        return _Transaction(self._db)


def open_or_set_aside(path: str | Path | None = None) -> tuple[Store, str | None]:
    """Open the store; (store, notice) where notice says a damaged file was set aside and a new one started.

    Raises SchemaTooNew (a newer Lokal's file: untouched) and StoreUnavailable (locked, read-only, full,
    I/O error: untouched; retry once the user fixed it). Only a file SQLite proves damaged is set aside.
    """
    target = Path(path) if path is not None else default_path()
    try:
        return Store(target), None
    except SchemaTooNew:
        raise
    except sqlite3.Error as exc:
        kind = fault_kind(exc)
        if kind != "corrupt" and not (kind == "unknown" and proven_damaged(target)):
            raise StoreUnavailable(kind, target, str(exc)) from exc
        reason = str(exc)
    aside = set_aside(target)
    log.warning("%s is damaged (%s): kept as %s, a new one was started", target, reason, aside)
    store = Store(target)
    return store, StoreFaults.tr(
        "Your conversations file was damaged ({reason}). It was kept, with everything it holds, as {file} "
        "(in {folder}), and a new one was started."
    ).format(reason=reason, file=aside.name, folder=aside.parent)


def proven_damaged(path: Path) -> bool:
    """SQLite's quick_check, on a connection of its own, finds damage (or says the file is no database at all)."""
    try:
        db = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return False
    try:
        (verdict,) = db.execute("PRAGMA quick_check(1)").fetchone()
        return verdict != "ok"
    except sqlite3.Error as exc:
        return fault_kind(exc) == "corrupt"
    finally:
        db.close()


def read_only_uri(path: Path) -> str:
    """A `file:` URI that opens exactly `path`, read-only: '%', '?' and '#' in a folder's name are escaped, not parsed."""
    return Path(path).absolute().as_uri() + "?mode=ro"


def set_aside(target: Path) -> Path:
    """Rename a damaged database and its -wal and -shm together: the WAL holds its newest commits."""
    aside = target.with_name(f"{target.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while aside.exists():
        n += 1
        aside = target.with_name(f"{target.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
    for suffix in ("-wal", "-shm", ""):  # the main file last: a crash midway leaves it where it was
        part = Path(str(target) + suffix)
        if part.exists():
            part.rename(Path(str(aside) + suffix))
    return aside


class _Transaction:
    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __enter__(self):
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *_):
        if exc_type is None:
            self._db.execute("COMMIT")
        elif self._db.in_transaction:  # SQLite may have rolled back already (a full disk does that)
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.Error:
                log.exception("rolling back failed")


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation(
        row["id"], row["title"], row["created_at"], row["updated_at"], row["system_prompt"], json.loads(row["settings"] or "{}"), row["selected_leaf"],
    )


def _message(row: sqlite3.Row) -> Message:
    return Message(
        row["id"], row["conversation_id"], row["position"], row["role"], row["content"], row["state"],
        from_stored(row["stats"], row["id"]), row["created_at"], row["model"], row["reasoning"], row["thinking_ms"],
        [], [],
        row["parent_id"], row["depth"],
        *((row["branch"], row["branches"]) if "branches" in row.keys() else (1, 1)),
    )
