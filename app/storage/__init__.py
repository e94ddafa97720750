"""Conversations on disk: SQLite in WAL mode, with a schema version and migrations."""

from app.storage.store import Conversation, Message, Store, default_path

__all__ = ["Conversation", "Message", "Store", "default_path"]
