"""Shared look: icons from resources/, the light/dark palette."""
