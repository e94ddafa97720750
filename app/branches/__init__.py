"""Conversations as trees of messages: the Chat menu's branch commands (the store's tree is app/storage/tree.py)."""
