"""Shared look: icons from app/resources/, the light/dark palette."""
