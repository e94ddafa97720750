"""Splitting a (possibly half-streamed) Markdown reply into prose and fenced code blocks.

Prose goes to Qt's own Markdown renderer (headings, lists, tables); code blocks
get their own widget with syntax highlighting and a copy button. A fence that
is still open while tokens stream is a code block already, so the text does
not jump from prose to code when the closing fence arrives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")


@dataclass
class Segment:
    kind: str  # "text" or "code"
    text: str
    language: str = ""
    closed: bool = True


def split(markdown: str) -> list[Segment]:
    segments: list[Segment] = []
    prose: list[str] = []
    code: list[str] | None = None
    fence = ""
    language = ""
    for line in markdown.split("\n"):
        if code is None:
            match = _FENCE.match(line)
            if match:
                if prose:
                    segments.append(Segment("text", "\n".join(prose)))
                    prose = []
                code, fence, language = [], match["fence"], match["info"].strip().split(" ")[0]
            else:
                prose.append(line)
        else:
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                segments.append(Segment("code", "\n".join(code), language))
                code = None
            else:
                code.append(line)
    if code is not None:
        segments.append(Segment("code", "\n".join(code), language, closed=False))
    elif prose and "\n".join(prose).strip():
        segments.append(Segment("text", "\n".join(prose)))
    return [piece for s in segments for piece in _paragraphs(s)]


def _paragraphs(segment: Segment) -> list[Segment]:
    """Prose split at blank lines, so a streaming reply re-renders only its last paragraph.

    Tables and tight lists have no blank lines inside; an ordered list split
    here keeps its numbers, because Markdown carries the start number.
    """
    if segment.kind == "code":
        return [segment]
    return [Segment("text", _hard_breaks(part)) for part in re.split(r"\n[ \t]*\n", segment.text) if part.strip()]


# Where one paragraph of a grouped segment ends and the next begins: a paragraph of its own, which the view takes out
# again and turns into the gap two views would have had. Blocks alone cannot tell: Qt makes a block of each line
# of a paragraph with line breaks too. U+2063, an invisible separator, which no reply's paragraph is made of.
PARAGRAPH_MARK = "\u2063"


def grouped(segments: list[Segment]) -> list[Segment]:
    """Consecutive prose paragraphs as one segment, for text shown whole (a finished reply, a conversation opened),
    joined by a PARAGRAPH_MARK paragraph.

    Each segment is a view of its own, and a view costs about a millisecond to make and lay out: 40,000
    characters of prose, a paragraph a view, took 309 ms to open, and 46 ms grouped (bench/long_reply.py).
    Paragraphs are split only so that a streaming reply re-renders its last one. In one view, a selection can
    also span them. A table keeps a segment of its own: its view scrolls sideways and keeps its words whole,
    which prose beside it should not.
    """
    out: list[Segment] = []
    for segment in segments:
        if segment.kind == "text" and out and out[-1].kind == "text" and not _is_table(segment.text) and not _is_table(out[-1].text):
            out[-1] = Segment("text", f"{out[-1].text}\n\n{PARAGRAPH_MARK}\n\n{segment.text}")
        else:
            out.append(segment)
    return out


def _is_table(text: str) -> bool:
    return any(line.lstrip().startswith("|") for line in text.split("\n"))


# A line that starts a Markdown block of its own (list item, table row, heading, quote, rule).
_BLOCK_START = re.compile(r"^\s*([-*+]\s|\d+[.)]\s|\||#|>|---|\*\*\*)")


def _hard_breaks(text: str) -> str:
    """Chat models write single newlines meaning line breaks (poems, addresses); Markdown would join them."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else None
        if following is not None and line.strip() and not _BLOCK_START.match(following) and not line.lstrip().startswith("|"):
            line = line.rstrip() + "  "
        out.append(line)
    return "\n".join(out)
