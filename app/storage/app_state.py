"""The app_state table: small values by key (the conversation on screen, window geometry, an import under way)."""

from __future__ import annotations

import sqlite3


def put(db: sqlite3.Connection, key: str, value: str) -> None:
    """Set `key` to `value`, whether or not it was there."""
    db.execute("INSERT INTO app_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))
