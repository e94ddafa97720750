"""API keys of remote endpoints: in the OS keyring when one is usable, otherwise in a file only the user can read.

The endpoints list (remote-endpoints.json) never holds a key; it names the
endpoint, and the key is looked up here by the endpoint's id.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from runtime.paths import config_dir

log = logging.getLogger("lokal.remote")

SERVICE = "lokal-remote-endpoint"
KEY_FILE = "remote-keys.json"


def _usable_keyring():
    """The keyring backend, or None where there is none worth the name (headless Linux has only the 'fail' one)."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:  # a broken backend configuration must not stop the window
        return None
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    return keyring


class KeyStore:
    def __init__(self, file: Path | None = None, use_keyring: bool = True):
        self.file = file or config_dir() / KEY_FILE
        self._keyring = _usable_keyring() if use_keyring else None

    @property
    def where(self) -> str:
        return "the system keyring" if self._keyring else str(self.file)

    def get(self, endpoint_id: str) -> str:
        if self._keyring is not None:
            try:
                return self._keyring.get_password(SERVICE, endpoint_id) or ""
            except Exception as exc:
                log.warning("keyring read failed (%s); using %s", exc, self.file)
        return self._read_file().get(endpoint_id, "")

    def set(self, endpoint_id: str, key: str) -> None:
        if self._keyring is not None:
            try:
                self._keyring.set_password(SERVICE, endpoint_id, key)
                return
            except Exception as exc:
                log.warning("keyring write failed (%s); using %s", exc, self.file)
        keys = self._read_file()
        keys[endpoint_id] = key
        self._write_file(keys)

    def delete(self, endpoint_id: str) -> None:
        if self._keyring is not None:
            try:
                self._keyring.delete_password(SERVICE, endpoint_id)
            except Exception:
                pass  # not there: nothing to delete
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
        tmp = self.file.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(keys, f)
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.file)
