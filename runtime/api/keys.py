"""The API's bearer key: generated on first use and kept, readable by its owner only, in the config directory.

The window reads the same file to show the key, so both sides agree without passing it around.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path

from runtime.paths import config_dir

KEY_FILE = "api-key"
KEY_PREFIX = "lokal-"


def key_path() -> Path:
    return config_dir() / KEY_FILE


def load_or_create(path: Path | None = None) -> str:
    """The key stored at `path`, creating it (mode 0600) if there is none."""
    path = path or key_path()
    key = _read(path)
    if key:
        return key
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    try:
        # O_EXCL: if another process (the window, a second `lokal serve`) made one meanwhile, theirs wins.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        theirs = _read(path)
        if theirs:
            return theirs
        # An empty or blank file: replace it whole, never leaving a moment where it is readable by others.
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(key + "\n")
        os.replace(tmp, path)
        return key
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(key + "\n")
    return key


def _read(path: Path) -> str:
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""
    # A key someone else can read is not a secret: take the group/other bits back.
    if key and stat.S_IMODE(path.stat().st_mode) & 0o077:
        os.chmod(path, 0o600)
    return key


def matches(expected: str, authorization: str | None) -> bool:
    """Whether an Authorization header carries `expected` as its bearer token (compared in constant time)."""
    if not authorization:
        return False
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(token.strip().encode(), expected.encode())
