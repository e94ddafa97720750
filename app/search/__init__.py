"""Search through every message of every conversation: FTS5 in the store, a search thread, Ctrl+K and Ctrl+F."""
