"""Where Lokal keeps its files: the platform's user directories, each overridable for tests.

Every folder here is private to the user (0700, runtime/private_files.py): they hold conversations,
saved KV states and logs. A models folder the user chose (LOKAL_MODELS_DIR) is created private if
missing but never changed if it exists: it may be one they share.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import platformdirs

from runtime.private_files import DIR_MODE, private_dir

APP_NAME = "lokal"


def _dir(env: str, default: str) -> Path:
    return private_dir(Path(os.environ.get(env) or default))


def cache_dir() -> Path:
    return _dir("LOKAL_CACHE_DIR", platformdirs.user_cache_dir(APP_NAME))


def data_dir() -> Path:
    return _dir("LOKAL_DATA_DIR", platformdirs.user_data_dir(APP_NAME))


def config_dir() -> Path:
    return _dir("LOKAL_CONFIG_DIR", platformdirs.user_config_dir(APP_NAME))


def models_dir() -> Path:
    chosen = os.environ.get("LOKAL_MODELS_DIR")
    if chosen:
        path = Path(chosen)
        path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        return path
    return private_dir(cache_dir() / "models")


def log_dir() -> Path:
    """Where the window and the runtime keep their log files (Help ▸ Open log folder)."""
    return _dir("LOKAL_LOG_DIR", platformdirs.user_log_dir(APP_NAME))


def runtime_dir() -> Path:
    """A private folder for sockets (the second-instance socket, app/single_instance.py).

    The user's runtime dir (XDG_RUNTIME_DIR on Linux), never a predictable name in the shared /tmp, where
    another account could take the name first. Where the platform's has no room for us (no
    XDG_RUNTIME_DIR and /run/user/<uid> missing: a container, a CI job, a login without systemd), a folder in
    the data directory serves. platformdirs offers /tmp/runtime-<uid> there (with a RuntimeDirWarning, once per
    process): the predictable name this folder is for avoiding. The choice goes by the path it offers, never by
    its warning, so that every process (a window, a second launch) makes the same one.
    """
    chosen = os.environ.get("LOKAL_RUNTIME_DIR")
    if chosen:
        return private_dir(Path(chosen), must_own=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its fallback's warning: this function says what it does instead
            offered = Path(platformdirs.user_runtime_dir(APP_NAME))
        if sys.platform != "win32" and not os.environ.get("XDG_RUNTIME_DIR") and offered.parent.name == f"runtime-{os.geteuid()}":
            raise OSError(f"no user runtime dir: platformdirs offered {offered}")  # its temporary fallback, by its name
        return private_dir(offered, must_own=True)
    except OSError:
        return private_dir(data_dir() / "run", must_own=True)
