"""Builds small GGUF files for tests: headers that declare what a test needs."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path


def _string(s: str) -> bytes:
    data = s.encode()
    return struct.pack("<Q", len(data)) + data


UINT32, FLOAT32, BOOL, STRING, ARRAY = 4, 6, 7, 8, 9


# ---- raw headers, field by field: for hostile files that claim what their bytes cannot hold -------------

UINT8, INT32, UINT64 = 0, 5, 10
_SCALAR_FORMATS = {UINT8: "<B", UINT32: "<I", INT32: "<i", BOOL: "<?", UINT64: "<Q", 12: "<d"}


def typed(kind: int, value) -> bytes:
    """A metadata value of an explicit type (its type id, then its bytes)."""
    if kind == STRING:
        return struct.pack("<I", STRING) + _string(value)
    return struct.pack("<I", kind) + struct.pack(_SCALAR_FORMATS[kind], value)


def entry(key: str, value: bytes) -> bytes:
    """One metadata entry: the key, then a value from typed(), nested_arrays() or array_claiming()."""
    return _string(key) + value


def nested_arrays(depth: int) -> bytes:
    """An array of one array of one array ... `depth` deep, the innermost empty (of uint8)."""
    return struct.pack("<I", ARRAY) + struct.pack("<IQ", ARRAY, 1) * (depth - 1) + struct.pack("<IQ", UINT8, 0)


def array_claiming(item_type: int, count: int) -> bytes:
    """An array header that claims `count` items and brings none of them."""
    return struct.pack("<IIQ", ARRAY, item_type, count)


def raw_header(*entries: bytes, n_kv: int | None = None, n_tensors: int = 0, tensors: bytes = b"") -> bytes:
    """GGUF v3 bytes: the counts (n_kv defaults to len(entries)), the entries and the tensor table as given,
    padded to 32 bytes. Nothing is checked: the counts may claim what the bytes do not hold."""
    out = b"GGUF" + struct.pack("<IQQ", 3, n_tensors, len(entries) if n_kv is None else n_kv) + b"".join(entries) + tensors
    return out + b"\0" * (-len(out) % 32)


def llama_claiming(block_count: int, kind: int = UINT32) -> bytes:
    """A llama header that claims `block_count` layers and is otherwise plausible (about 150 bytes)."""
    return raw_header(
        entry("general.architecture", typed(STRING, "llama")),
        entry("llama.block_count", typed(kind, block_count)),
        entry("llama.attention.head_count", typed(UINT32, 8)),
        entry("llama.attention.head_count_kv", typed(UINT32, 8)),
    )


def _value(value: str | int | float | bool | list) -> bytes:
    if isinstance(value, bool):
        return struct.pack("<IB", BOOL, value)
    if isinstance(value, float):
        return struct.pack("<If", FLOAT32, value)
    if isinstance(value, int):
        return struct.pack("<II", UINT32, value)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):  # of strings (a vocabulary, a header's read one) or of uint32
        kind = STRING if all(isinstance(v, str) for v in value) else UINT32
        items = b"".join(_string(v) if kind == STRING else struct.pack("<I", v) for v in value)
        return struct.pack("<IIQ", ARRAY, kind, len(value)) + items
    return struct.pack("<I", STRING) + _string(value)


def gguf_header(metadata: dict[str, str | int | bool | list], tensor_elements: int) -> bytes:
    """The header of a GGUF with the given metadata and one F32 tensor of `tensor_elements` elements, padded to
    the data section (the tensor's bytes follow it)."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 1, len(metadata)))
    for key, value in metadata.items():
        out += _string(key) + _value(value)
    out += _string("token_embd.weight") + struct.pack("<I", 1) + struct.pack("<Q", tensor_elements) + struct.pack("<IQ", 0, 0)
    header_size = (len(out) + 31) // 32 * 32
    return bytes(out + b"\0" * (header_size - len(out)))


def write_gguf(path: Path, *, metadata: dict[str, str | int | bool | list], tensor_elements: int, sparse: bool = True) -> Path:
    """A GGUF with the given metadata (strings, uint32, bools, arrays of either) and one F32 tensor of
    `tensor_elements` elements.

    The tensor data is not written: the file is extended sparsely, so a
    "200 GB model" costs no disk.
    """
    header = gguf_header(metadata, tensor_elements)
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(len(header) + 4 * tensor_elements)
    return path


TINY_VOCABULARY = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [f"tok{i}" for i in range(297)]


def tokenizer_metadata(vocabulary: list[str], bos: int = 1, eos: int = 2) -> dict:
    return {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "qwen2",
        "tokenizer.ggml.tokens": vocabulary,
        "tokenizer.ggml.bos_token_id": bos,
        "tokenizer.ggml.eos_token_id": eos,
    }


def write_llama(path: Path, *, name: str, block_count: int, embedding: int, tokenizer: dict, file_type: int = 15) -> Path:
    """A header-only llama-architecture GGUF (Q4_K_M unless `file_type` says otherwise) with the given tokenizer."""
    metadata = {
        "general.architecture": "llama",
        "general.name": name,
        "general.file_type": file_type,
        "llama.block_count": block_count,
        "llama.context_length": 32768,
        "llama.embedding_length": embedding,
        "llama.feed_forward_length": 4 * embedding,
        "llama.attention.head_count": embedding // 64,
        "llama.attention.head_count_kv": 2,
        **tokenizer,
    }
    return write_gguf(path, metadata=metadata, tensor_elements=block_count * embedding * 64)


def write_draft_pair(folder: Path) -> tuple[Path, Path]:
    """A target and a smaller draft model with one tokenizer (vocabulary and special tokens): what a draft
    pair such as Qwen2.5-Coder 1.5B and 0.5B is to the draft check, headers only (a few MB, sparse)."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = tokenizer_metadata(TINY_VOCABULARY)
    target = write_llama(folder / "tiny-coder-1.5b-instruct-q4_k_m.gguf", name="Tiny Coder 1.5B Instruct", block_count=28, embedding=1536, tokenizer=tokenizer)
    draft = write_llama(folder / "tiny-coder-0.5b-instruct-q4_k_m.gguf", name="Tiny Coder 0.5B Instruct", block_count=24, embedding=896, tokenizer=tokenizer)
    return target, draft


def write_projectors(folder: Path) -> tuple[Path, Path]:
    """Two multimodal projector files (clip architecture; f16 and Q8_0 by name, 4 MB and 2 MB of zero weights):
    what a vision repository carries beside its model, for the downloads and the fit (never loaded)."""
    folder.mkdir(parents=True, exist_ok=True)
    metadata = {"general.architecture": "clip", "clip.has_vision_encoder": True, "clip.projector_type": "idefics3"}
    f16 = write_gguf(folder / "mmproj-f16.gguf", metadata={**metadata, "general.file_type": 1}, tensor_elements=1 << 20)
    q8 = write_gguf(folder / "mmproj-q8_0.gguf", metadata={**metadata, "general.file_type": 7}, tensor_elements=1 << 19)
    return f16, q8


def with_chat_template(source: Path, target: Path, template: str) -> Path:
    """A copy of the model `source` whose embedded chat template is `template` (padded with spaces to the old length).

    The header keeps its size, so every offset in the file stays valid and llama.cpp loads the copy as it loads the original.
    """
    from runtime.gguf.reader import read_file_header

    old = read_file_header(source).chat_template.encode()
    new = template.encode()
    if len(new) > len(old):
        raise ValueError(f"the new template must fit in the old one's {len(old)} bytes")
    data = bytearray(source.read_bytes())
    at = data.find(old)
    assert at > 0 and data.find(old, at + 1) < 0, "the template must appear exactly once"
    data[at : at + len(old)] = new + b" " * (len(old) - len(new))
    target.write_bytes(data)
    return target


def twin_of(model: Path, target: Path) -> Path:
    """A copy of `model` that is another file to Lokal (its identity hashes the first MiB, where the header's
    name is: one letter of it changes), and that llama.cpp loads exactly as the original: a draft model
    with the same tokenizer for tests that need one that really loads."""
    from runtime.gguf.reader import read_file_header

    data = bytearray(model.read_bytes())
    name = read_file_header(model).name.encode()
    at = data.find(name, data.find(b"general.name"))
    assert 0 < at < 1 << 20
    data[at] = ord(chr(data[at]).swapcase()) if chr(data[at]).isalpha() else ord("X")
    target.write_bytes(bytes(data))
    return target
