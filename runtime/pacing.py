"""Progress said a few times a second at most, and always at its end: a model fetch's, a document's embedding."""

from __future__ import annotations

import time
from typing import Callable

INTERVAL_S = 0.25


class PacedProgress:
    """`say(done, total)` for each call, except those that come within INTERVAL_S of the last one said; the last (done
    == total) is always said."""

    def __init__(self, say: Callable[[int, int], None], interval_s: float = INTERVAL_S):
        self._say = say
        self._interval_s = interval_s
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - self._last >= self._interval_s:
            self._last = now
            self._say(done, total)
