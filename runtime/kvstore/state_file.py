"""The on-disk format of one saved sequence state, and the checks that keep a damaged file from being used.

    prelude   8-byte magic | u32 header length | u64 xxh3 of the header
    header    JSON: format, tag (what the state is valid for), n_tokens, state_bytes, checksum,
              prefill_ms_per_token (what prefilling cost when it was saved: how much a restore saves)
    tokens    n_tokens little-endian int32: the exact token ids the state covers
    state     llama_state_seq_get_data's bytes

The header and token ids are read on their own to index a file; the state is
read, and its checksum checked, only when it is about to be restored. The
checksum (xxh3-128) covers tokens and state, so a flipped bit anywhere after the
header is caught, and the header's own hash catches one inside it. A truncated
file is caught by its length, which the header fixes exactly.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

import numpy as np
import xxhash

MAGIC = b"LOKALKV\x01"
FORMAT = 1
_PRELUDE = struct.Struct("<8sIQ")
MAX_HEADER_BYTES = 1 << 20


class StateFileError(ValueError):
    """The file is not a whole, intact state file."""


@dataclass
class StateHeader:
    tag: dict
    n_tokens: int
    state_bytes: int
    checksum: str
    key: str
    data_offset: int  # where the token ids start
    prefill_ms_per_token: float = 0.0

    @property
    def file_size(self) -> int:
        return self.data_offset + 4 * self.n_tokens + self.state_bytes


def checksum(tokens: np.ndarray, state: np.ndarray) -> str:
    h = xxhash.xxh3_128()
    h.update(np.ascontiguousarray(tokens, dtype="<i4").data.cast("B"))
    h.update(state.data.cast("B"))
    return h.hexdigest()


def _rename(tmp: Path, path: Path, _size: int) -> bool:
    os.replace(tmp, path)
    return True


def write(
    path: Path, key: str, tag: dict, tokens: np.ndarray, state: np.ndarray, prefill_ms_per_token: float = 0.0,
    publish: Callable[[Path, Path, int], bool] = _rename,
) -> int:
    """Write atomically: a temporary file in the same directory, then `publish(tmp, path, size)` renames it into place.

    Returns the file's size, or 0 when publish declined (and the temporary file is removed)."""
    tokens = np.ascontiguousarray(tokens, dtype="<i4")
    header = json.dumps(
        {
            "format": FORMAT, "key": key, "tag": tag, "n_tokens": int(tokens.size), "state_bytes": int(state.size),
            "checksum": checksum(tokens, state), "prefill_ms_per_token": float(prefill_ms_per_token),
        },
        sort_keys=True,
    ).encode()
    size = _PRELUDE.size + len(header) + tokens.nbytes + state.nbytes
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(_PRELUDE.pack(MAGIC, len(header), xxhash.xxh3_64_intdigest(header)))
            f.write(header)
            f.write(tokens.data.cast("B"))
            f.write(state.data.cast("B"))
        published = publish(tmp, path, size)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if not published:
        tmp.unlink(missing_ok=True)
        return 0
    return size


def read_index(f: BinaryIO, file_size: int) -> tuple[StateHeader, np.ndarray]:
    """Header and token ids, without the state; raises StateFileError for anything damaged or cut short."""
    prelude = f.read(_PRELUDE.size)
    if len(prelude) < _PRELUDE.size:
        raise StateFileError("file ends inside its prelude")
    magic, header_len, header_hash = _PRELUDE.unpack(prelude)
    if magic != MAGIC:
        raise StateFileError("not a Lokal KV state file (wrong magic)")
    if header_len > MAX_HEADER_BYTES:
        raise StateFileError(f"implausible header length {header_len}")
    raw = f.read(header_len)
    if len(raw) < header_len or xxhash.xxh3_64_intdigest(raw) != header_hash:
        raise StateFileError("header is damaged")
    try:
        data = json.loads(raw)
        header = StateHeader(
            data["tag"], int(data["n_tokens"]), int(data["state_bytes"]), str(data["checksum"]), str(data["key"]),
            _PRELUDE.size + header_len, float(data.get("prefill_ms_per_token", 0.0)),
        )
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        raise StateFileError(f"header does not parse: {exc}") from None
    if data.get("format") != FORMAT:
        raise StateFileError(f"format {data.get('format')!r}, expected {FORMAT}")
    # A negative count would pass the length check against a larger other one, then make a read or
    # an allocation fail with something other than StateFileError: the store would keep the file.
    for name in ("n_tokens", "state_bytes"):
        if getattr(header, name) < 0:
            raise StateFileError(f"header says {name} = {getattr(header, name)}: a count cannot be negative")
    if file_size != header.file_size:
        raise StateFileError(f"file is {file_size} bytes, its header says {header.file_size}: truncated or padded")
    tokens = np.frombuffer(f.read(4 * header.n_tokens), dtype="<i4")
    if tokens.size != header.n_tokens:
        raise StateFileError("file ends inside its token ids")
    return header, tokens


def read_state(path: Path, expected_tag: dict) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, state) of a file whose header, tag, length and checksum all check out; StateFileError otherwise."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        header, tokens = read_index(f, size)
        if header.tag != expected_tag:
            raise StateFileError("saved for another model or settings")
        state = np.empty(header.state_bytes, dtype=np.uint8)
        if f.readinto(state.data) != header.state_bytes:
            raise StateFileError("file ends inside its state")
    if checksum(tokens, state) != header.checksum:
        raise StateFileError("checksum mismatch: the file is corrupted")
    return tokens, state
