"""Prompt lookup: draft the tokens that followed the last occurrence of the current suffix.

Code edits, quotes and summaries repeat long runs of the conversation, and such a
run is found by its last few tokens. A hashed n-gram index (one dict per n-gram
length, key: the n tokens, value: where the most recent occurrence ended) makes
each lookup O(n_max) instead of a scan over the whole history, and is extended
token by token as the reply grows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

N_MIN = 1
N_MAX = 6


@dataclass(frozen=True)
class Match:
    n: int  # length of the matched suffix: longer matches are accepted more often
    continuation: list[int]


class NgramIndex:
    def __init__(self, n_min: int = N_MIN, n_max: int = N_MAX):
        self.n_min = n_min
        self.n_max = n_max
        self.tokens: list[int] = []
        # Occurrences ending before the last token only: the last token's own suffix must not match itself.
        self._indexed = 0
        self._ends: dict[int, dict[tuple[int, ...], int]] = {n: {} for n in range(n_min, n_max + 1)}

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
                    table[tuple(tokens[end - n : end])] = end
        self._indexed = max(self._indexed, len(tokens) - 1)

    def match(self, limit: int) -> Match | None:
        """The continuation (at most `limit` tokens) of the longest suffix seen before, most recent occurrence."""
        if limit <= 0 or len(self.tokens) < 2:
            return None
        self._catch_up()
        tokens = self.tokens
        for n in range(min(self.n_max, len(tokens) - 1), self.n_min - 1, -1):
            end = self._ends[n].get(tuple(tokens[-n:]))
            if end is not None:
                return Match(n, tokens[end : end + limit])
        return None
