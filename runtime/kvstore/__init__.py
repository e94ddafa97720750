"""Conversations that stay warm: llama.cpp sequence states saved after each turn, restored when a conversation comes back."""
