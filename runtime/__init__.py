"""Lokal's runtime: the background process that loads models and generates text. Never imports Qt."""

__version__ = "0.1.0"
