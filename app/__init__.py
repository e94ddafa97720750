"""Lokal's user-facing side: the Qt window and the command line. Never imports llama_cpp."""
