"""How the window starts one of `lokal`'s own commands as a child process (the starter model's fetch, an import)."""

from __future__ import annotations

import sys


def own_command(*args: str) -> list[str]:
    """This same executable running one of its commands (the window's children: the starter model's fetch, an
    import): the frozen app runs itself with the command; from source, `python -m app` does."""
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    return [sys.executable, "-m", "app", *args]
