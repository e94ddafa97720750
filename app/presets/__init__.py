"""Presets: a system prompt and sampling settings (optionally a model and its load settings) to start a chat from."""
