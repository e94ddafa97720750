"""Prompt lookup: draft the tokens that followed the last occurrence of the current suffix.

Code edits, quotes and summaries repeat long runs of the conversation, and such a
run is found by its last few tokens. A hashed n-gram index (one dict per n-gram
length, key: the n tokens, value: where the most recent occurrence ended) makes
each lookup a few dict probes instead of a scan over the whole history, and is
extended token by token as the reply grows.

The suffix lengths indexed go up to 64, sparsely: the length of the match says
how long the reply has been copying, and that predicts acceptance far better
than any fixed n (measured on code edits with Qwen2.5-Coder-1.5B: the first
drafted token is accepted 23% of the time after a 1-token match, 71% after 5-7,
95% after 16 or more).

A short suffix often occurs several times, and its occurrences go on differently
(`@dataclass\nclass` before each class of a module). Two things follow. Which
occurrence: the one the reply was copying, found from where its copy last
stood (`near`): after an inserted line, the copy resumes where it left the
source, not at the suffix's last occurrence. How far: the share of the
occurrences that still agree with the chosen continuation after m tokens
(`agreement`, as SuffixDecoding weighs a draft by its frequency). Measured on the
benchmark's code edits (bench/copy_runs.py): a first drafted token that most of
the other occurrences contradict broke 90% of the time, one they all agree with 14%.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Sequence

LENGTHS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
OCCURRENCES = 16  # the most recent occurrences of a suffix whose continuations are compared


@dataclass(frozen=True)
class NgramMatch:
    """An earlier occurrence of the history's last `n` tokens, and the tokens that followed it there (a draft)."""

    n: int  # length of the matched suffix: longer matches are accepted more often
    continuation: list[int]
    start: int  # where the continuation starts in the history
    # agreement[m - 1]: the share of the suffix's occurrences whose continuation agrees with this one's first m tokens
    agreement: tuple[float, ...] = ()


class NgramIndex:
    def __init__(self, lengths: Sequence[int] = LENGTHS, ends: Callable[[int], bool] = lambda token: False):
        self.lengths = sorted(lengths, reverse=True)
        # Whether a token ends a reply (end of generation): a continuation stops after it, since a reply
        # ends there and nothing drafted past it can be accepted. A copy of the message given to edit
        # otherwise ran on into the chat template's tokens after it: js-fix-empty drafted 54 tokens
        # of which the last 35 lay past the message's end.
        self.ends = ends
        self.tokens: list[int] = []
        # Occurrences ending before the last token only: the last token's own suffix must not match itself.
        self._indexed = 0
        self._ends: dict[int, dict[tuple[int, ...], list[int]]] = {n: {} for n in self.lengths}

    def reset(self, tokens: Sequence[int]) -> None:
        """Point the index at a new history; reuses the work done if it only grew."""
        if len(tokens) >= len(self.tokens) and list(tokens[: len(self.tokens)]) == self.tokens:
            self.extend(tokens[len(self.tokens) :])
            return
        self.tokens = []
        self._indexed = 0
        for table in self._ends.values():
            table.clear()
        self.extend(tokens)

    def extend(self, tokens: Sequence[int]) -> None:
        self.tokens.extend(tokens)

    def _catch_up(self) -> None:
        tokens = self.tokens
        # An occurrence ending at `end` (exclusive) is followed by tokens[end:], so it needs end < len.
        for end in range(self._indexed + 1, len(tokens)):
            for n, table in self._ends.items():
                if end >= n:
                    table.setdefault(tuple(tokens[end - n : end]), []).append(end)
        self._indexed = max(self._indexed, len(tokens) - 1)

    def match(self, limit: int, near: int | None = None) -> NgramMatch | None:
        """The continuation (at most `limit` tokens) of the longest suffix seen before.

        Of its occurrences, the first that ends at or after `near` (where the reply's copy last stood),
        else the most recent.
        """
        if limit <= 0 or len(self.tokens) < 2:
            return None
        self._catch_up()
        tokens = self.tokens
        for n in self.lengths:
            if n >= len(tokens):
                continue
            ends = self._ends[n].get(tuple(tokens[-n:]))
            if ends:
                at = bisect.bisect_left(ends, near) if near is not None else len(ends)
                end = ends[at] if at < len(ends) else ends[-1]
                continuation = self._up_to_an_end(tokens[end : end + limit])
                if continuation:
                    return NgramMatch(n, continuation, end, self._agreement(ends, end, continuation))
        return None

    def continuation_at(self, start: int, limit: int) -> list[int]:
        """The history's tokens from `start`, at most `limit`, as a draft (up to a reply's end)."""
        return self._up_to_an_end(self.tokens[start : start + limit])

    def _agreement(self, ends: list[int], chosen: int, continuation: list[int]) -> tuple[float, ...]:
        """agreement[m - 1]: the share of the recent occurrences (the chosen one among them) agreeing for m tokens.

        An occurrence whose continuation runs into the end of the history disagrees with nothing past it.
        """
        tokens, k = self.tokens, len(continuation)
        others = [end for end in ends[-OCCURRENCES:] if end != chosen]
        if not others:
            return (1.0,) * k
        agreeing = [1 + len(others)] * k
        for end in others:
            held = 0
            while held < k and end + held < len(tokens) and tokens[end + held] == continuation[held]:
                held += 1
            if end + held < len(tokens):  # it parts at `held`: it disagrees from there on
                for m in range(held, k):
                    agreeing[m] -= 1
        total = 1 + len(others)
        return tuple(a / total for a in agreeing)

    def _up_to_an_end(self, continuation: list[int]) -> list[int]:
        for i, token in enumerate(continuation):
            if token < 0:
                # A picture's positions (runtime/vision/positions.py): no token can be drafted there, nor past them.
                return continuation[:i]
            if self.ends(token):
                return continuation[: i + 1]
        return continuation
