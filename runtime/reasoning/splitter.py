"""A reply's text, as it streams, split into reasoning and answer.

Text comes in pieces of any size (a token's text, a step's): a marker may be cut across two pieces, so
a tail that could still grow into a marker is held back until the next piece settles it, and nothing
is ever sent to the wrong side. The markers themselves go to neither side.

`<think>` replies: the reasoning is the text between the markers without the whitespace around it, the
answer what follows the closing marker without the blank lines that separate them (as llama-server's
`reasoning_content` and `content`). A reply that does not begin with the open marker (whitespace
aside), and whose prompt did not open a block, is all answer: a model that writes `<think>` in the
middle of its answer is quoting it.

Harmony replies (gpt-oss): the bodies of `analysis` messages are the reasoning, those of every other
channel (final, commentary) the answer; headers (`<|start|>assistant<|channel|>final<|message|>`) go to
neither. A reply with no harmony markup at all is answer.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from runtime.reasoning.markers import (
    HARMONY_ANALYSIS, HARMONY_CALL, HARMONY_CHANNEL, HARMONY_END, HARMONY_MESSAGE, HARMONY_RETURN, HARMONY_START, ReasoningSyntax,
)


@dataclass
class Parts:
    """Text that a push settled: what goes to the reasoning, and what to the answer."""

    reasoning: str = ""
    answer: str = ""

    def __iadd__(self, other: "Parts") -> "Parts":
        self.reasoning += other.reasoning
        self.answer += other.answer
        return self


class State(enum.Enum):
    UNDECIDED = "undecided"  # nothing but whitespace yet: the reply may still open a block
    REASONING = "reasoning"
    ANSWER = "answer"
    HEADER = "header"  # harmony: between messages, reading a header


def _partial_tail(text: str, markers: tuple[str, ...]) -> int:
    """Length of the longest tail of `text` that is a proper prefix of one of `markers` (it may grow into one)."""
    longest = 0
    for marker in markers:
        for n in range(min(len(marker) - 1, len(text)), longest, -1):
            if text.endswith(marker[:n]):
                longest = n
                break
    return longest


class ReasoningSplitter:
    """Feed it a reply's text with `push`; each call returns what that text settled. `finish` flushes the rest.

    `starts_open`: the prompt left the reply inside a reasoning block (markers.opens_block)."""

    def __init__(self, syntax: ReasoningSyntax, starts_open: bool = False):
        self.syntax = syntax
        self.state = State.REASONING if starts_open else State.UNDECIDED
        self.thought = starts_open  # a reasoning block was entered at some point
        self._pending = ""
        self._held_space = ""  # reasoning's trailing whitespace, sent only if more reasoning follows
        self._answer_begun = False  # past the blank lines after the closing marker
        self._reasoning_begun = False  # past the whitespace after the open marker
        self._channel = ""  # harmony: the channel of the message being read
        self._open_checked = syntax.kind == "harmony"  # <think>: whether a block the prompt opened was opened again

    @property
    def in_answer(self) -> bool:
        return self.state is State.ANSWER

    @property
    def decided(self) -> bool:
        return self.state is not State.UNDECIDED

    @property
    def closing(self) -> bool:
        """In a reasoning block, with the start of a marker held back: the model may be closing the block itself."""
        return self.state is State.REASONING and bool(self._pending)

    def push(self, text: str) -> Parts:
        self._pending += text
        out = Parts()
        while self._pending:
            progressed = self._harmony_step(out) if self.syntax.kind == "harmony" else self._think_step(out)
            if not progressed:
                break
        return out

    def finish(self) -> Parts:
        """The end of the reply: whatever is held back is settled (an unfinished marker is text after all)."""
        out = Parts()
        rest, self._pending = self._pending, ""
        if self.state is State.UNDECIDED or (self.state is State.HEADER and not any(m in rest for m in self.syntax.markers)):
            self.state = State.ANSWER
            out.answer += rest
        elif self.state is State.REASONING:
            self._emit_reasoning(out, rest.rstrip(), final=True)
        elif self.state is State.ANSWER:
            self._emit_answer(out, rest)
        self._held_space = ""
        return out

    # ---- <think> ---------------------------------------------------------
    def _think_step(self, out: Parts) -> bool:
        open_, close = self.syntax.open, self.syntax.close
        if self.state is State.UNDECIDED:
            stripped = self._pending.lstrip()
            if not stripped:
                return False
            if stripped.startswith(open_):
                self._pending = stripped[len(open_):]
                self.state, self.thought, self._open_checked = State.REASONING, True, True
                return True
            if open_.startswith(stripped):
                return False  # may still become the open marker
            self.state = State.ANSWER
            self._answer_begun = True  # a reply without a block is kept as written
            return True
        if self.state is State.REASONING and not self._open_checked:
            # A block the prompt opened: an open marker the model writes anyway is the marker, not reasoning.
            stripped = self._pending.lstrip()
            if not stripped or (open_.startswith(stripped) and stripped != open_):
                return False
            self._open_checked = True
            if stripped.startswith(open_):
                self._pending = stripped[len(open_):]
            return True
        if self.state is State.REASONING:
            at = self._pending.find(close)
            if at >= 0:
                self._emit_reasoning(out, self._pending[:at].rstrip(), final=True)
                self._pending = self._pending[at + len(close):]
                self._held_space = ""
                self.state = State.ANSWER
                return True
            keep = _partial_tail(self._pending, (close,))
            ready, self._pending = self._pending[: len(self._pending) - keep], self._pending[len(self._pending) - keep:]
            self._emit_reasoning(out, ready, final=False)
            return False
        self._emit_answer(out, self._pending)
        self._pending = ""
        return False

    def _emit_reasoning(self, out: Parts, text: str, final: bool) -> None:
        if not self._reasoning_begun:
            text = text.lstrip()
            if not text:
                return
            self._reasoning_begun = True
        text = self._held_space + text
        body = text.rstrip()
        self._held_space = "" if final else text[len(body):]
        out.reasoning += body

    def _emit_answer(self, out: Parts, text: str) -> None:
        if not self._answer_begun:
            text = text.lstrip()
            if not text:
                return
            self._answer_begun = True
        out.answer += text

    # ---- harmony ---------------------------------------------------------
    def _harmony_step(self, out: Parts) -> bool:
        if self.state is State.UNDECIDED:
            stripped = self._pending.lstrip()
            if not stripped:
                return False
            if stripped.startswith((HARMONY_CHANNEL, HARMONY_START)):
                self._pending, self.state = stripped, State.HEADER
                return True
            if HARMONY_CHANNEL.startswith(stripped) or HARMONY_START.startswith(stripped):
                return False
            self.state, self._channel, self._answer_begun = State.ANSWER, "final", True
            return True
        if self.state is State.HEADER:
            at = self._pending.find(HARMONY_MESSAGE)
            if at < 0:
                return False  # headers are a few tokens: wait for the whole of it
            header = self._pending[:at]
            channel = header.rsplit(HARMONY_CHANNEL, 1)[1] if HARMONY_CHANNEL in header else "final"
            self._channel = channel.split("<|", 1)[0].split()[0] if channel.strip() else "final"
            self._pending = self._pending[at + len(HARMONY_MESSAGE):]
            if self._channel == HARMONY_ANALYSIS:
                self.state, self.thought, self._reasoning_begun = State.REASONING, True, False
            else:
                self.state = State.ANSWER
            return True
        ends = (HARMONY_END, HARMONY_RETURN, HARMONY_CALL, HARMONY_START)
        found = [(at, marker) for marker in ends if (at := self._pending.find(marker)) >= 0]
        if found:
            at, marker = min(found)
            self._harmony_body(out, self._pending[:at], final=True)
            self._pending = self._pending[at + (0 if marker == HARMONY_START else len(marker)):]
            self.state = State.HEADER
            return True
        keep = _partial_tail(self._pending, ends)
        ready, self._pending = self._pending[: len(self._pending) - keep], self._pending[len(self._pending) - keep:]
        self._harmony_body(out, ready, final=False)
        return False

    def _harmony_body(self, out: Parts, text: str, final: bool) -> None:
        if self.state is State.REASONING:
            self._emit_reasoning(out, text.rstrip() if final else text, final)
            if final:
                self._held_space = ""
        else:
            out.answer += text
