"""Where Lokal keeps its files: the platform's user directories, each overridable for tests."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "lokal"


def _dir(env: str, default: str) -> Path:
    path = Path(os.environ.get(env) or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    return _dir("LOKAL_CACHE_DIR", platformdirs.user_cache_dir(APP_NAME))


def data_dir() -> Path:
    return _dir("LOKAL_DATA_DIR", platformdirs.user_data_dir(APP_NAME))


def config_dir() -> Path:
    return _dir("LOKAL_CONFIG_DIR", platformdirs.user_config_dir(APP_NAME))


def models_dir() -> Path:
    return _dir("LOKAL_MODELS_DIR", str(cache_dir() / "models"))


def log_dir() -> Path:
    """Where the window and the runtime keep their log files (Help ▸ Open log folder)."""
    return _dir("LOKAL_LOG_DIR", platformdirs.user_log_dir(APP_NAME))
