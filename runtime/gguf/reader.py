"""Reads the header of a GGUF file: metadata and tensor table, never the weights.

It reads from any binary stream, so the same code serves a local file and the
first bytes of a remote file fetched with an HTTP range request (the catalog's
fit check). The `gguf` package's GGUFReader memory-maps a whole local file,
which neither case allows.

Headers are untrusted: the model browser reads one from any repository the user
merely opens, and model.load from any file it is offered. So the reader does
work in proportion to the bytes it is given, never to a number they claim:
every count and length must fit in what the file has left (each item takes at
least so many bytes), arrays nest at most MAX_ARRAY_DEPTH deep and are parsed
without recursion, and the numbers the app computes with (layers, heads,
lengths, alignment) are checked once here, so the properties below cannot
fail or loop for long later. Anything wrong is a GGUFError that says what.
"""

from __future__ import annotations

import io
import math
import os
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, overload

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
# A header bigger than this is not a plausible model file: refuse instead of allocating.
MAX_STRING_BYTES = 64 * 1024 * 1024
MAX_ARRAY_ITEMS = 16 * 1024 * 1024
MAX_KV_COUNT = 1 << 20
MAX_TENSORS = 1 << 20
# Real models nest no arrays at all (llama.cpp reads none that do); a few levels are tolerated.
MAX_ARRAY_DEPTH = 8
# llama.cpp's LLAMA_MAX_LAYERS: it loads no model with more layers, and per-layer arrays are this long at most.
MAX_LAYERS = 512
# Head counts, lengths and the context are uint32 in llama.cpp.
MAX_DIMENSION = 2**32 - 1
# The fewest bytes one metadata entry (empty key, type, uint8 value) and one tensor entry (empty name,
# rank, type, offset) take: a count the rest of the file cannot hold is refused before the loop.
MIN_KV_BYTES = 8 + 4 + 1
MIN_TENSOR_BYTES = 8 + 4 + 4 + 8


class GGUFError(ValueError):
    """The bytes are not a (complete) GGUF file."""


class NeedMoreData(GGUFError):
    """The stream ended inside the header: more bytes are needed to parse it."""


# ggml type id -> (elements per block, bytes per block)
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110),
    22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
    29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66), 39: (32, 17),
}

# llama_ftype (general.file_type) -> the quantization name users know
FILE_TYPES: dict[int, str] = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M",
    30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}

# Bytes per element of the KV cache types a user can choose.
KV_TYPE_BYTES: dict[str, float] = {"f32": 4.0, "f16": 2.0, "bf16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32, "q4_1": 20 / 32, "q5_0": 22 / 32, "q5_1": 24 / 32}

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


@dataclass
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int  # from the start of the data section

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def n_bytes(self) -> int:
        block, size = GGML_BLOCKS.get(self.ggml_type, (1, 0))
        return self.n_elements // block * size


@dataclass
class GGUFHeader:
    version: int
    metadata: dict[str, Any]
    tensors: list[TensorInfo]
    header_size: int  # bytes up to the start of the (aligned) data section
    file_size: int | None = None

    # ---- general ------------------------------------------------------
    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", "unknown"))

    def arch_value(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(f"{self.architecture}.{key}", default)

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name") or "")

    @property
    def quantization(self) -> str:
        file_type = self.metadata.get("general.file_type")
        if isinstance(file_type, int) and file_type in FILE_TYPES:
            return FILE_TYPES[file_type]
        return "unknown"

    @property
    def n_params(self) -> int:
        return sum(t.n_elements for t in self.tensors)

    @property
    def tensor_bytes(self) -> int:
        return sum(t.n_bytes for t in self.tensors)

    @property
    def data_end(self) -> int:
        """Where the last tensor's data ends: a complete file is at least this long."""
        if not self.tensors:
            return self.header_size
        return self.header_size + max(t.offset + t.n_bytes for t in self.tensors)

    # ---- shape of the KV cache -----------------------------------------
    @property
    def n_layers(self) -> int:
        return int(self.arch_value("block_count", 0) or 0)

    @property
    def context_length(self) -> int:
        return int(self.arch_value("context_length", 0) or 0)

    @property
    def n_head(self) -> int:
        return _first_int(self.arch_value("attention.head_count", 0))

    def n_head_kv_per_layer(self) -> list[int]:
        value = self.arch_value("attention.head_count_kv", None)
        if value is None:
            value = self.arch_value("attention.head_count", 0)
        if isinstance(value, list):
            return [int(v) for v in value][: self.n_layers] or [0]
        return [int(value)] * self.n_layers

    @property
    def key_length(self) -> int:
        value = self.arch_value("attention.key_length")
        if value is not None:
            return int(value)
        n_head = self.n_head
        return int(self.arch_value("embedding_length", 0)) // n_head if n_head else 0

    @property
    def value_length(self) -> int:
        value = self.arch_value("attention.value_length")
        return int(value) if value is not None else self.key_length

    @property
    def sliding_window(self) -> int:
        return int(self.arch_value("attention.sliding_window", 0) or 0)

    def kv_bytes_per_token(self, type_k: str = "f16", type_v: str = "f16") -> int:
        """KV cache bytes one token takes: sum over layers of kv_heads x (key_len x K bytes + value_len x V bytes)."""
        k_bytes = KV_TYPE_BYTES[type_k]
        v_bytes = KV_TYPE_BYTES[type_v]
        total = 0.0
        for n_kv in self.n_head_kv_per_layer():
            total += n_kv * (self.key_length * k_bytes + self.value_length * v_bytes)
        return int(round(total))

    # ---- tokenizer ----------------------------------------------------
    @property
    def tokenizer_model(self) -> str:
        return str(self.metadata.get("tokenizer.ggml.model", ""))

    @property
    def tokenizer_pre(self) -> str:
        return str(self.metadata.get("tokenizer.ggml.pre", ""))

    @property
    def vocab_size(self) -> int:
        tokens = self.metadata.get("tokenizer.ggml.tokens")
        return len(tokens) if isinstance(tokens, (list, Strings)) else int(self.arch_value("vocab_size", 0) or 0)

    @property
    def chat_template(self) -> str | None:
        template = self.metadata.get("tokenizer.chat_template")
        return template if isinstance(template, str) and template.strip() else None


class Strings(Sequence[str]):
    """An array of strings as the file holds it: one bytes object of length-prefixed items and where each starts.

    A vocabulary's 150,000 tokens parsed into str objects took 0.4 s of Python (the GIL held, so the window's
    event loop waited on it); this keeps the bytes, walked once, and decodes an item only when it is asked for.
    Two of them compare as their bytes do (a C comparison); with a list, item by item.
    """

    __slots__ = ("_raw", "_starts")

    def __init__(self, raw: bytes, starts: array):
        self._raw = raw
        self._starts = starts  # len(self) + 1 offsets into raw: item i is raw[starts[i] + 8 : starts[i + 1]]

    def __len__(self) -> int:
        return len(self._starts) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("string index out of range")
        return self._raw[self._starts[index] + 8 : self._starts[index + 1]].decode("utf-8", errors="replace")

    def prefix_bytes(self, n: int) -> bytes:
        """The first `n` items as the file holds them."""
        return self._raw[: self._starts[n]]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Strings):
            return len(self) == len(other) and self._raw == other._raw
        if isinstance(other, list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._raw)

    def __repr__(self) -> str:
        return f"Strings({len(self)} items)"


def _first_int(value: Any) -> int:
    if isinstance(value, list):
        return int(value[0]) if value else 0
    return int(value or 0)


class _Stream:
    def __init__(self, stream: BinaryIO, size: int | None):
        self._stream = stream
        self._size = size
        self.position = 0

    def left(self) -> int | None:
        """Bytes the file has after the current position, when its size is known (a remote
        RangeStream learns its total_size from the first reply)."""
        size = self._size if self._size is not None else getattr(self._stream, "total_size", None)
        return None if size is None else size - self.position

    def fits(self, count: int, each: int, what: str) -> None:
        """NeedMoreData unless `count` items of at least `each` bytes fit in what the file has left: raised
        before the loop or the allocation, where reading would find the same (a truncated or a lying header)."""
        left = self.left()
        if left is not None and count * each > left:
            raise NeedMoreData(f"{what} of {count:,} at byte {self.position} needs at least {count * each:,} bytes, but the file has {max(left, 0):,} left")

    def read(self, n: int) -> bytes:
        data = self._stream.read(n)
        if len(data) < n:
            raise NeedMoreData(f"file ends after {self.position + len(data)} bytes, inside the GGUF header")
        self.position += n
        return data

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.scalar("<Q")
        if length > MAX_STRING_BYTES:
            raise GGUFError(f"implausible string length {length} at byte {self.position}")
        self.fits(length, 1, "a string")
        return self.read(length).decode("utf-8", errors="replace")

    def value(self, value_type: int, *, keep_arrays: bool) -> Any:
        if value_type == _ARRAY:
            return self._array(keep_arrays)
        return self._leaf(value_type)

    def _leaf(self, value_type: int) -> Any:
        if value_type in _SCALARS:
            return self.scalar(_SCALARS[value_type])
        if value_type == _STRING:
            return self.string()
        raise GGUFError(f"unknown metadata value type {value_type} at byte {self.position}")

    def _array_head(self) -> tuple[int, int]:
        item_type = self.scalar("<I")
        count = self.scalar("<Q")
        if item_type not in _MIN_BYTES:
            raise GGUFError(f"unknown array item type {item_type} at byte {self.position}")
        if count > MAX_ARRAY_ITEMS:
            raise GGUFError(f"implausible array length {count}")
        self.fits(count, _MIN_BYTES[item_type], "an array")
        return item_type, count

    def _scalars(self, item_type: int, count: int, keep: bool) -> Any:
        fmt = _SCALARS[item_type]
        data = self.read(struct.calcsize(fmt) * count)
        return list(struct.unpack(f"<{count}{fmt[1:]}", data)) if keep else count

    def _strings(self, count: int, keep: bool) -> Strings | int:
        """An array of `count` strings, read in blocks and walked by its length prefixes (no per-item read). A block
        never reaches past the array: each item left takes at least its 8-byte length, so 8 bytes an item left
        is there to read, and the stream is left where the array ends, as a read item by item leaves it."""
        raw = bytearray()
        starts = array("Q", [0])
        at = 0  # where the next item starts in raw
        for left in range(count, 0, -1):
            if len(raw) - at < 8:
                raw += self.read(min(BLOCK_BYTES, 8 * left) - (len(raw) - at))
            (length,) = _LENGTH.unpack_from(raw, at)
            if length > MAX_STRING_BYTES:
                raise GGUFError(f"implausible string length {length} at byte {self.position - len(raw) + at + 8}")
            end = at + 8 + length
            if end > len(raw):
                self.fits(end - len(raw) + 8 * (left - 1), 1, "a string")
                raw += self.read(end - len(raw) + min(BLOCK_BYTES, 8 * (left - 1)))
            starts.append(end)
            at = end
        return Strings(bytes(raw), starts) if keep else count

    def _array(self, keep_arrays: bool) -> Any:
        """An array, nested ones included, with a stack of its own: no recursion, however deep the file nests."""
        item_type, count = self._array_head()
        if item_type in _SCALARS:
            return self._scalars(item_type, count, keep_arrays)
        if item_type == _STRING:
            return self._strings(count, keep_arrays)
        root: list = []
        stack = [(root, item_type, count)]  # (the list being filled, its item type, items still to read)
        while stack:
            items, item_type, count = stack[-1]
            if count == 0:
                stack.pop()
                continue
            stack[-1] = (items, item_type, count - 1)
            if item_type != _ARRAY:
                items.append(self._leaf(item_type))
                continue
            if len(stack) >= MAX_ARRAY_DEPTH:
                raise GGUFError(f"arrays nested more than {MAX_ARRAY_DEPTH} deep at byte {self.position}")
            sub_type, sub_count = self._array_head()
            if sub_type in _SCALARS:
                items.append(self._scalars(sub_type, sub_count, keep_arrays))
            else:
                child: list = []
                items.append(child)
                stack.append((child, sub_type, sub_count))
        return root


_LENGTH = struct.Struct("<Q")
# How much of a string array is read at once (never past its end: see _Stream._strings).
BLOCK_BYTES = 256 * 1024

# The fewest bytes an item of each type takes: a string is its 8-byte length, an array its type and count.
_MIN_BYTES = {**{t: struct.calcsize(fmt) for t, fmt in _SCALARS.items()}, _STRING: 8, _ARRAY: 12}


# Big arrays whose contents the app never needs: only their length is kept.
_COUNT_ONLY = {"tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.merges"}


def read_header(stream: BinaryIO, file_size: int | None = None) -> GGUFHeader:
    """Parse a GGUF header from `stream`. Raises GGUFError (NeedMoreData if the bytes stop early).

    Errors of the stream itself (OSError, a network error) pass through unchanged.
    """
    try:
        header = _parse(_Stream(stream, file_size), file_size)
        _check_numbers(header)
    except GGUFError:
        raise
    except (struct.error, ValueError, TypeError, OverflowError, ZeroDivisionError, IndexError, KeyError, RecursionError) as exc:
        raise GGUFError(f"unreadable GGUF header ({type(exc).__name__}: {exc})") from None
    return header


def _parse(s: _Stream, file_size: int | None) -> GGUFHeader:
    magic = s._stream.read(4)
    s.position = len(magic)
    if magic != GGUF_MAGIC:
        raise GGUFError("not a GGUF file (wrong magic bytes)")
    version = s.scalar("<I")
    if version not in (2, 3):
        raise GGUFError(f"unsupported GGUF version {version}")
    n_tensors = s.scalar("<Q")
    n_kv = s.scalar("<Q")
    if n_tensors > MAX_TENSORS or n_kv > MAX_KV_COUNT:
        raise GGUFError("implausible tensor or metadata count: corrupted header")
    s.fits(n_kv, MIN_KV_BYTES, "a metadata count")
    s.fits(n_tensors, MIN_TENSOR_BYTES, "a tensor count")
    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        key = s.string()
        value_type = s.scalar("<I")
        metadata[key] = s.value(value_type, keep_arrays=key not in _COUNT_ONLY)
    tensors = []
    for _ in range(n_tensors):
        name = s.string()
        n_dims = s.scalar("<I")
        if n_dims > 8:
            raise GGUFError(f"implausible tensor rank {n_dims}")
        shape = tuple(s.scalar("<Q") for _ in range(n_dims))
        ggml_type = s.scalar("<I")
        offset = s.scalar("<Q")
        tensors.append(TensorInfo(name, shape, ggml_type, offset))
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    # llama.cpp's own rule: a power of two (0 would divide by zero below).
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment <= 0 or alignment & (alignment - 1):
        raise GGUFError(f"general.alignment = {alignment!r}: the alignment must be a power of two")
    header_size = (s.position + alignment - 1) // alignment * alignment
    return GGUFHeader(version, metadata, tensors, header_size, file_size)


# The architecture's numbers that sizes are computed from: each a count from 0 to MAX_DIMENSION
# (a per-layer array of them at most MAX_LAYERS long), block_count at most MAX_LAYERS.
_SHAPE_KEYS = (
    "block_count", "context_length", "embedding_length", "feed_forward_length", "vocab_size",
    "attention.head_count", "attention.head_count_kv", "attention.key_length", "attention.value_length",
    "attention.sliding_window",
)


def _check_numbers(header: GGUFHeader) -> None:
    """Refuse the numbers the app computes with unless each is a plausible count, so that no property
    of the header fails or loops for long later (a 152-byte header can claim 4 billion layers)."""
    arch = header.architecture
    for key in _SHAPE_KEYS:
        value = header.arch_value(key)
        if value is None:
            continue
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and (key == "block_count" or len(items) > MAX_LAYERS):
            raise GGUFError(f"{arch}.{key}: an array of {len(items)} items where {'a number' if key == 'block_count' else f'at most {MAX_LAYERS} (one per layer)'} belongs")
        for item in items:
            if not isinstance(item, (int, float)) or (isinstance(item, float) and not math.isfinite(item)) or not 0 <= item <= MAX_DIMENSION:
                raise GGUFError(f"{arch}.{key} = {item!r}: expected a count from 0 to {MAX_DIMENSION}")
    if header.n_layers > MAX_LAYERS:
        raise GGUFError(f"{arch}.block_count = {header.n_layers}: llama.cpp loads models of at most {MAX_LAYERS} layers")
    # Everything the catalog and model.load read from a header, computed once: any other surprise is a GGUFError here.
    header.kv_bytes_per_token(), header.context_length, header.sliding_window, header.vocab_size, header.data_end, header.n_params, header.quantization, header.name, header.chat_template


def read_file_header(path: str | os.PathLike) -> GGUFHeader:
    """Read a local file's header and check that the file holds all its tensor data."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        header = read_header(io.BufferedReader(f, buffer_size=1 << 20), size)
    if size < header.data_end:
        raise GGUFError(f"truncated GGUF file: {size} bytes, but its tensors need {header.data_end}")
    return header
