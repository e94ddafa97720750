"""A model file's identity: its size and hashes of its first and last MiB.

The KV store tags saved states with it (runtime/kvstore/saved_states.py), the Model menu lists one
entry per identity (the same file reached by two paths, or copied into the models folder, is one
model), and the per-model load settings are keyed by it (runtime/models/load_settings.py): a
renamed or moved file keeps its settings, a replaced one does not. Reading 2 MiB is quick, but a
list of many files asks again on every scan, so identities are remembered per (path, size, mtime).
"""

from __future__ import annotations

import os
import threading

import xxhash

FINGERPRINT_BYTES = 1 << 20

_known: dict[tuple[str, int, int], str] = {}
_known_lock = threading.Lock()


def file_identity(path: str | os.PathLike) -> str:
    """The identity of the file at `path` (OSError if it cannot be read)."""
    path = os.fspath(path)
    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_size, stat.st_mtime_ns)
    with _known_lock:
        known = _known.get(key)
    if known is not None:
        return known
    size = stat.st_size
    h = xxhash.xxh3_128()
    h.update(str(size).encode())
    with open(path, "rb") as f:
        h.update(f.read(FINGERPRINT_BYTES))
        f.seek(max(0, size - FINGERPRINT_BYTES))
        h.update(f.read(FINGERPRINT_BYTES))
    identity = h.hexdigest()
    with _known_lock:
        _known[key] = identity
    return identity
