"""A document cut into chunks for retrieval, the cuts on paragraph and code-block boundaries.

Blocks first: paragraphs (runs of lines between blank lines) and fenced code blocks (``` or ~~~ to
the matching fence, blank lines inside included), so a function or a table is never cut in the
middle when it fits a chunk. Blocks are then packed in order into chunks of at most `max_chars`;
a single block larger than that is cut on line boundaries. Each chunk keeps the lines it spans
(1-based, in the extracted text), which is what a citation shows ("lines 40–62", or the page).

Chunk size does not depend on the chat model, so a document's chunks and their vectors serve every
model and conversation it is used with (runtime/documents/index.py keys them by the file's hash).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHUNK_CHARS = 1000  # about 250 tokens: several fit a small context, each says enough to be found
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Chunk:
    index: int
    text: str
    first_line: int  # 1-based, inclusive
    last_line: int


def blocks(text: str) -> list[tuple[int, int]]:
    """(first, last) line indexes, 0-based inclusive, of each paragraph or fenced code block."""
    lines = text.split("\n")
    found: list[tuple[int, int]] = []
    start: int | None = None
    fence: str | None = None
    for i, line in enumerate(lines):
        marker = FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1) == fence:
                assert start is not None
                found.append((start, i))
                start, fence = None, None
            continue
        if marker:
            if start is not None:
                found.append((start, i - 1))
            start, fence = i, marker.group(1)
        elif not line.strip():
            if start is not None:
                found.append((start, i - 1))
                start = None
        elif start is None:
            start = i
    if start is not None:
        found.append((start, len(lines) - 1))
    return found


def chunk_text(text: str, max_chars: int = CHUNK_CHARS) -> list[Chunk]:
    lines = text.split("\n")
    pieces: list[tuple[int, int]] = []  # blocks, the ones too long cut on line boundaries
    for first, last in blocks(text):
        size = 0
        begin = first
        for i in range(first, last + 1):
            if size and size + len(lines[i]) + 1 > max_chars:
                pieces.append((begin, i - 1))
                begin, size = i, 0
            size += len(lines[i]) + 1
        pieces.append((begin, last))
    chunks: list[Chunk] = []
    current: list[tuple[int, int]] = []
    size = 0
    for first, last in pieces:
        piece_size = sum(len(lines[i]) + 1 for i in range(first, last + 1))
        if current and size + piece_size > max_chars:
            chunks.append(_chunk(len(chunks), lines, current))
            current, size = [], 0
        current.append((first, last))
        size += piece_size + 1
    if current:
        chunks.append(_chunk(len(chunks), lines, current))
    return chunks


def _chunk(index: int, lines: list[str], pieces: list[tuple[int, int]]) -> Chunk:
    first, last = pieces[0][0], pieces[-1][1]
    text = "\n".join(lines[first : last + 1]).strip("\n")
    return Chunk(index, text, first + 1, last + 1)
