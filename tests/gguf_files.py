"""Builds small GGUF files for tests: headers that declare what a test needs."""

from __future__ import annotations

import struct
from pathlib import Path


def _string(s: str) -> bytes:
    data = s.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, *, metadata: dict[str, str | int], tensor_elements: int, sparse: bool = True) -> Path:
    """A GGUF with the given string/uint32 metadata and one F32 tensor of `tensor_elements` elements.

    The tensor data is not written: the file is extended sparsely, so a
    "200 GB model" costs no disk.
    """
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 1, len(metadata)))
    for key, value in metadata.items():
        out += _string(key)
        if isinstance(value, int):
            out += struct.pack("<II", 4, value)
        else:
            out += struct.pack("<I", 8) + _string(value)
    out += _string("token_embd.weight") + struct.pack("<I", 1) + struct.pack("<Q", tensor_elements) + struct.pack("<IQ", 0, 0)
    header_size = (len(out) + 31) // 32 * 32
    out += b"\0" * (header_size - len(out))
    with open(path, "wb") as f:
        f.write(out)
        f.truncate(header_size + 4 * tensor_elements)
    return path


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
