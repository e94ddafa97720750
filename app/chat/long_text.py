"""A message of yours too long to show whole: its first and last lines, and how much lies between.

Formatted as Markdown on the window's thread, a pasted log of 2 MB (28,095 lines) held the window for 411-501 ms
when it was sent and again each time its conversation opened; folded, it opens in 6-12 ms (bench/long_message.py).
A long message shows its head and its tail (where a question about the pasted text usually is) as plain text; Show
all opens the whole text in a box that scrolls, which lays out only the lines in sight (68 ms for those 2 MB).
"""

from __future__ import annotations

from dataclasses import dataclass

FOLD_CHARS = 6_000  # formatting this much of a log as Markdown takes 2.2 ms (bench/long_message.py): shown whole up to it
FOLD_LINES = 60  # or taller than a screen
HEAD_LINES, TAIL_LINES = 8, 4
LINE_CHARS = 400  # a preview line longer than this is cut (a minified file can be one line of megabytes)


@dataclass(frozen=True)
class Fold:
    head: str
    tail: str
    hidden_lines: int  # lines neither in the head nor in the tail
    lines: int


def is_long(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


def fold(text: str) -> Fold | None:
    """The head and the tail a long message shows; None for one short enough to show whole."""
    if not is_long(text):
        return None
    lines = text.count("\n") + 1
    head = _first_lines(text, HEAD_LINES)
    tail_lines = min(TAIL_LINES, lines - HEAD_LINES)
    tail = _last_lines(text, tail_lines) if tail_lines > 0 else ""
    return Fold(_cut_long_lines(head), _cut_long_lines(tail, from_end=True), max(0, lines - HEAD_LINES - TAIL_LINES), lines)


def _first_lines(text: str, n: int) -> str:
    """The first n lines, reading no further than they reach (the text may be megabytes)."""
    end = -1
    for _ in range(n):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return text[:end]


def _last_lines(text: str, n: int) -> str:
    start = len(text)
    for _ in range(n):
        start = text.rfind("\n", 0, start)
        if start < 0:
            return text
    return text[start + 1:]


def _cut_long_lines(text: str, from_end: bool = False) -> str:
    cut = []
    for line in text.split("\n"):
        if len(line) > LINE_CHARS:
            line = "…" + line[-LINE_CHARS:] if from_end else line[:LINE_CHARS] + "…"
        cut.append(line)
    return "\n".join(cut)
