"""Continuous batching across conversations in one llama.cpp context (scheduler.py)."""
