"""The on-disk format of one part of a saved sequence state, and the checks that keep a damaged file from being used.

    prelude   8-byte magic | u32 header length | u64 xxh3 of the header
    header    JSON: format, key, tag (what the state is valid for), chain, first, last, segments,
              n_tokens, state_bytes (their totals), checksum, prefill_ms_per_token (what prefilling
              cost when it was saved: how much a restore saves)
    tokens    the segments' token ids, little-endian int32, one segment after the other
    state     the segments' llama_state_seq_get_data bytes, one after the other

A conversation's state is a chain of parts (store.py): part 0 is a whole state
(`<key>.kvs`), each later part (`<key>.<n>.kvs`) only what a turn added. A part
holds one or more segments, each the KV cells of positions [start, start+n_tokens)
as llama.cpp wrote them from a sequence holding just those cells; restoring a
segment cuts the cache back to `start` and appends its cells (seq_state.py).
`chain` names the chain a part belongs to and `first`..`last` the part numbers
it covers (a compacted part 0 covers several), so a part left over from another
chain, or one that lost its predecessor in a crash, is never applied.

Format 1 (before chains) was one whole state with no chain fields: it reads as
part 0 of a chain of its own, so states saved then still restore.

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
from typing import Any, BinaryIO, Callable, Sequence

import numpy as np
import xxhash

MAGIC = b"LOKALKV\x01"
FORMAT = 2
READABLE_FORMATS = (1, 2)
_PRELUDE = struct.Struct("<8sIQ")
MAX_HEADER_BYTES = 1 << 20


class StateFileError(ValueError):
    """The file is not a whole, intact state file."""


@dataclass
class Segment:
    """KV cells of positions [start, start + len(tokens)), and the ids they were computed from."""

    start: int
    tokens: np.ndarray  # int32
    state: np.ndarray  # uint8: llama_state_seq_get_data's bytes


@dataclass(frozen=True)
class SegmentInfo:
    start: int
    n_tokens: int
    state_bytes: int


@dataclass
class StateHeader:
    tag: dict[str, Any]
    checksum: str
    key: str
    data_offset: int  # where the token ids start
    segments: list[SegmentInfo]
    chain: str
    first: int  # the part numbers this file covers
    last: int
    prefill_ms_per_token: float = 0.0

    @property
    def n_tokens(self) -> int:
        return sum(s.n_tokens for s in self.segments)

    @property
    def state_bytes(self) -> int:
        return sum(s.state_bytes for s in self.segments)

    @property
    def file_size(self) -> int:
        return self.data_offset + 4 * self.n_tokens + self.state_bytes


def checksum(segments: Sequence[Segment]) -> str:
    h = xxhash.xxh3_128()
    for s in segments:
        h.update(np.ascontiguousarray(s.tokens, dtype="<i4").data.cast("B"))
    for s in segments:
        h.update(np.ascontiguousarray(s.state).data.cast("B"))
    return h.hexdigest()


def _rename(tmp: Path, path: Path, _size: int, _checksum: str) -> bool:
    os.replace(tmp, path)
    return True


def write(
    path: Path, key: str, tag: dict[str, Any], tokens: np.ndarray, state: np.ndarray, prefill_ms_per_token: float = 0.0,
    publish: Callable[[Path, Path, int, str], bool] = _rename, chain: str = "",
) -> int:
    """A whole state: part 0 of a chain of one segment (see write_part)."""
    return write_part(path, key, tag, [Segment(0, tokens, state)], chain or new_chain_id(), 0, 0, prefill_ms_per_token, publish)


def new_chain_id() -> str:
    return os.urandom(8).hex()


def write_part(
    path: Path, key: str, tag: dict[str, Any], segments: Sequence[Segment], chain: str, first: int, last: int,
    prefill_ms_per_token: float = 0.0, publish: Callable[[Path, Path, int, str], bool] = _rename,
) -> int:
    """Write atomically: a temporary file in the same directory, then `publish(tmp, path, size, checksum)` renames it into place.

    Returns the file's size, or 0 when publish declined (and the temporary file is removed)."""
    segments = [Segment(s.start, np.ascontiguousarray(s.tokens, dtype="<i4"), np.ascontiguousarray(s.state, dtype=np.uint8)) for s in segments]
    digest = checksum(segments)
    header = json.dumps(
        {
            "format": FORMAT, "key": key, "tag": tag, "chain": chain, "first": first, "last": last,
            "segments": [[s.start, int(s.tokens.size), int(s.state.size)] for s in segments],
            "n_tokens": sum(int(s.tokens.size) for s in segments), "state_bytes": sum(int(s.state.size) for s in segments),
            "checksum": digest, "prefill_ms_per_token": float(prefill_ms_per_token),
        },
        sort_keys=True,
    ).encode()
    size = _PRELUDE.size + len(header) + sum(s.tokens.nbytes + s.state.nbytes for s in segments)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(_PRELUDE.pack(MAGIC, len(header), xxhash.xxh3_64_intdigest(header)))
            f.write(header)
            for s in segments:
                f.write(s.tokens.data.cast("B"))
            for s in segments:
                f.write(s.state.data.cast("B"))
        published = publish(tmp, path, size, digest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if not published:
        tmp.unlink(missing_ok=True)
        return 0
    return size


def _header(data: dict[str, Any], data_offset: int) -> StateHeader:
    """The header's fields, checked for sense; format 1 (one whole state, no chain) reads as part 0 of its own chain."""
    fmt = data.get("format")
    if fmt not in READABLE_FORMATS:
        raise StateFileError(f"format {fmt!r}, expected one of {READABLE_FORMATS}")
    try:
        n_tokens, state_bytes = int(data["n_tokens"]), int(data["state_bytes"])
        common = dict(tag=data["tag"], checksum=str(data["checksum"]), key=str(data["key"]), data_offset=data_offset,
                      prefill_ms_per_token=float(data.get("prefill_ms_per_token", 0.0)))
        # A negative count would pass the length check against a larger other one, then make a read or
        # an allocation fail with something other than StateFileError: the store would keep the file.
        for name, value in (("n_tokens", n_tokens), ("state_bytes", state_bytes)):
            if value < 0:
                raise StateFileError(f"header says {name} = {value}: a count cannot be negative")
        if fmt == 1:
            return StateHeader(**common, segments=[SegmentInfo(0, n_tokens, state_bytes)], chain=f"v1-{common['checksum']}", first=0, last=0)
        segments = [SegmentInfo(int(start), int(n), int(b)) for start, n, b in data["segments"]]
        header = StateHeader(**common, segments=segments, chain=str(data["chain"]), first=int(data["first"]), last=int(data["last"]))
    except StateFileError:
        raise
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        raise StateFileError(f"header does not parse: {exc}") from None
    if not segments or any(s.start < 0 or s.n_tokens < 1 or s.state_bytes < 1 for s in segments):
        raise StateFileError("header lists an empty segment or one at a negative position")
    if (header.n_tokens, header.state_bytes) != (n_tokens, state_bytes):
        raise StateFileError("header's totals do not add up its segments")
    if not 0 <= header.first <= header.last or (header.first == 0 and segments[0].start != 0):
        raise StateFileError(f"header's part numbers {header.first}..{header.last} make no chain")
    return header


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
    except ValueError as exc:
        raise StateFileError(f"header does not parse: {exc}") from None
    if not isinstance(data, dict):
        raise StateFileError("header does not parse: not an object")
    header = _header(data, _PRELUDE.size + header_len)
    if file_size != header.file_size:
        raise StateFileError(f"file is {file_size} bytes, its header says {header.file_size}: truncated or padded")
    tokens = np.frombuffer(f.read(4 * header.n_tokens), dtype="<i4")
    if tokens.size != header.n_tokens:
        raise StateFileError("file ends inside its token ids")
    return header, tokens


def read_state(path: Path, expected_tag: dict[str, Any]) -> tuple[StateHeader, list[Segment]]:
    """Header and segments of a file whose header, tag, length and checksum all check out; StateFileError otherwise."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        header, tokens = read_index(f, size)
        if header.tag != expected_tag:
            raise StateFileError("saved for another model or settings")
        state = np.empty(header.state_bytes, dtype=np.uint8)
        if f.readinto(state.data) != header.state_bytes:
            raise StateFileError("file ends inside its state")
    segments, t, b = [], 0, 0
    for info in header.segments:
        segments.append(Segment(info.start, tokens[t : t + info.n_tokens], state[b : b + info.state_bytes]))
        t, b = t + info.n_tokens, b + info.state_bytes
    if checksum(segments) != header.checksum:
        raise StateFileError("checksum mismatch: the file is corrupted")
    return header, segments
