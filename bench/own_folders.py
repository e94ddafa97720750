"""Folders of a benchmark run's own for the runtime it starts (its saved KV states, its API key), removed at exit."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile


def own_folder(variable: str, prefix: str) -> str:
    """Point the environment's `variable` (LOKAL_CACHE_DIR, ...) at a new folder removed when the run exits, unless
    the shell set it: then that folder, left as it is."""
    chosen = os.environ.get(variable)
    if chosen:
        return chosen
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    os.environ[variable] = path
    return path
