"""An import's conversations while it writes them in batches: on disk, but not yet anyone's to see.

`lokal import` writes a large export in many short transactions, so the window, which writes on its GUI
thread, waits at most one of them for the database lock rather than the whole import (seconds). The import
stays all or nothing: until its last transaction, the conversations it wrote are listed under one app_state
key, and every read the window makes (the conversation list, search) leaves them out. The last transaction
deletes the key; a failure, or a stop asked for (the window's Cancel), deletes the conversations, again in short
transactions. An import whose process died midway leaves its key behind: the next Store to open finds its owner
gone and deletes what it wrote.

The owner is a process id with its start time (psutil), so a later process given the same id is not taken
for it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from typing import Callable

from app.storage import app_state

KEY_PREFIX = "import-pending:"  # app_state: KEY_PREFIX + a token -> {"pid", "started", "conversations"}
# The ids of conversations written by imports not yet finished. A constant, so every read can leave them out.
# Text only: one NULL in a NOT IN list would leave every conversation out.
HIDDEN = (
    "SELECT j.value FROM app_state s, json_each(s.value, '$.conversations') j "
    "WHERE s.key > 'import-pending:' AND s.key < 'import-pending;' AND j.type = 'text'"  # ';' follows ':': the keys with the prefix
)


def begin(db: sqlite3.Connection) -> str:
    """Name this process as the owner of a new import (inside the caller's transaction); returns its key."""
    import psutil  # here, not at the top: the window imports this module as it opens, and seldom needs psutil (18 ms)

    key = KEY_PREFIX + uuid.uuid4().hex
    me = psutil.Process(os.getpid())
    _write(db, key, {"pid": me.pid, "started": me.create_time(), "conversations": []})
    return key


def add(db: sqlite3.Connection, key: str, conversation_ids: list[str]) -> None:
    """Record conversations written in the caller's transaction as this import's, still hidden."""
    (value,) = db.execute("SELECT value FROM app_state WHERE key = ?", (key,)).fetchone()
    entry = json.loads(value)
    entry["conversations"] += conversation_ids
    _write(db, key, entry)


def finish(db: sqlite3.Connection, key: str) -> None:
    """Show the import's conversations: its commit point, in the caller's transaction."""
    db.execute("DELETE FROM app_state WHERE key = ?", (key,))


def undo_some(db: sqlite3.Connection, key: str, until: Callable[[], bool]) -> bool:
    """Delete what the import wrote, one conversation at a time (one at least) until `until()`, in the caller's
    transaction, and its key once nothing is left; True once it is all gone."""
    row = db.execute("SELECT value FROM app_state WHERE key = ?", (key,)).fetchone()
    entry = _entry(row[0]) if row is not None else None
    if entry is None:  # gone, or not this module's writing: nothing it names can be undone
        db.execute("DELETE FROM app_state WHERE key = ?", (key,))
        return True
    left: list[str] = [c for c in entry["conversations"] if isinstance(c, str)]
    entry["conversations"] = left
    while left:
        db.execute("DELETE FROM conversations WHERE id = ?", (left.pop(),))
        if until():
            break
    if left:
        _write(db, key, entry)
        return False
    db.execute("DELETE FROM app_state WHERE key = ?", (key,))
    return True


def abandoned(db: sqlite3.Connection) -> list[str]:
    """The keys of imports whose process is gone (a crash, a kill): what they wrote is to be undone."""
    rows = db.execute("SELECT key, value FROM app_state WHERE key > 'import-pending:' AND key < 'import-pending;'").fetchall()
    return [key for key, value in rows if not _alive(_entry(value))]


def _entry(value: str) -> dict | None:
    try:
        entry = json.loads(value)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) and isinstance(entry.get("conversations"), list) else None


def _alive(owner: dict | None) -> bool:
    import psutil

    if owner is None:
        return False
    try:
        return abs(psutil.Process(int(owner["pid"])).create_time() - float(owner["started"])) < 1.0
    except (psutil.Error, KeyError, TypeError, ValueError):
        return False


def _write(db: sqlite3.Connection, key: str, entry: dict) -> None:
    app_state.put(db, key, json.dumps(entry))
