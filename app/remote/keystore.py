"""API keys of remote endpoints: in the OS keyring; in a file only the user can read, or nowhere, if the person says so.

The endpoints list (remote-endpoints.json) never holds a key; it names the
endpoint, and the key is looked up here by the endpoint's id. Where the
keyring is missing (headless Linux has only keyring's 'fail' backend) or
refuses a key (locked, denied), nothing is written silently: set() says why,
the key is kept in memory for this session, and the window asks whether to
store it in a 0600 file (set_in_file) or not at all.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from runtime.paths import config_dir

log = logging.getLogger("lokal.remote")

SERVICE = "lokal-remote-endpoint"
KEY_FILE = "remote-keys.json"


def _usable_keyring() -> tuple[Any, str | None]:
    """(the keyring module, None), or (None, why there is none worth the name)."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None, "the keyring package is missing"
    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # a broken backend configuration must not stop the window
        return None, f"the keyring could not be set up ({type(exc).__name__}: {exc})"
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None, f"this system has no keyring service (keyring backend: {type(backend).__module__}.{type(backend).__name__})"
    return keyring, None


class KeyStore:
    def __init__(self, file: Path | None = None, use_keyring: bool = True):
        self.file = file or config_dir() / KEY_FILE
        self._keyring: Any  # the keyring module, None when there is none worth the name (_no_keyring says why)
        self._no_keyring: str | None
        self._keyring, self._no_keyring = _usable_keyring() if use_keyring else (None, "the keyring is turned off")
        self._session: dict[str, str] = {}  # keys the person chose not to store (or not yet): until Lokal quits
        self.read_problem: str | None = None  # the last failure to read the keyring, for the window to say

    @property
    def where(self) -> str:
        return "the system keyring" if self._keyring else str(self.file)

    def set(self, endpoint_id: str, key: str) -> str | None:
        """Store the key in the keyring: None once it is there; otherwise why not (the key is then kept for this session only)."""
        self._session[endpoint_id] = key
        if self._keyring is None:
            return self._no_keyring
        try:
            self._keyring.set_password(SERVICE, endpoint_id, key)
        except Exception as exc:
            log.warning("keyring write failed: %s", exc)
            return f"the system keyring refused it ({type(exc).__name__}: {exc})"
        del self._session[endpoint_id]
        return None

    def set_in_file(self, endpoint_id: str, key: str) -> None:
        """What the person chose where the keyring failed: a file only they can read."""
        keys = self._read_file()
        keys[endpoint_id] = key
        self._write_file(keys)
        self._session.pop(endpoint_id, None)

    def get(self, endpoint_id: str) -> str:
        if endpoint_id in self._session:
            return self._session[endpoint_id]
        if self._keyring is not None:
            try:
                key = self._keyring.get_password(SERVICE, endpoint_id)
                if isinstance(key, str) and key:
                    return key
            except Exception as exc:
                log.warning("keyring read failed: %s", exc)
                self.read_problem = f"the system keyring could not be read ({type(exc).__name__}: {exc})"
        return self._read_file().get(endpoint_id, "")

    def delete(self, endpoint_id: str) -> None:
        self._session.pop(endpoint_id, None)
        if self._keyring is not None:
            try:
                self._keyring.delete_password(SERVICE, endpoint_id)
            except self._keyring.errors.PasswordDeleteError:
                pass  # not there: nothing to delete
            except Exception as exc:  # the keyring failed: the file below may still hold it, and is cleared
                log.warning("keyring delete failed: %s", exc)
        keys = self._read_file()
        if keys.pop(endpoint_id, None) is not None:
            self._write_file(keys)

    def _read_file(self) -> dict[str, str]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}

    def _write_file(self, keys: dict[str, str]) -> None:
        # Written to a 0600 temporary file first, then renamed: never a moment where the keys are readable by others.
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(keys, f)
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.file)
