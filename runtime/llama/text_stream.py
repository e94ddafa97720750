"""Turns generated token bytes into text deltas that are safe to show.

Two things are held back until they are settled: the bytes of a UTF-8
character split across tokens, and text that may be the start of a stop
string (so a stop string never flashes on screen and is never returned).
"""

from __future__ import annotations

import codecs
from typing import Sequence


class TextStream:
    def __init__(self, stop: Sequence[str] = ()):
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stop = [s for s in stop if s]
        self._pending = ""  # decoded, not yet released (might begin a stop string)
        self.text = ""  # released so far
        self.stopped = False

    def push(self, data: bytes) -> str:
        """Feed a token's bytes; returns the text that can be released now."""
        if self.stopped:
            return ""
        self._pending += self._decoder.decode(data)
        if not self._stop:
            return self._release(len(self._pending))
        for stop in self._stop:
            at = self._pending.find(stop)
            if at >= 0:
                self.stopped = True
                released = self._release(at)
                self._pending = ""
                return released
        return self._release(len(self._pending) - self._held_back())

    def finish(self) -> str:
        """End of generation: release whatever is still held."""
        if self.stopped:
            return ""
        self._pending += self._decoder.decode(b"", final=True)
        return self._release(len(self._pending))

    def _held_back(self) -> int:
        """Length of the longest tail of pending text that is a proper prefix of a stop string."""
        longest = 0
        for stop in self._stop:
            for n in range(min(len(stop) - 1, len(self._pending)), longest, -1):
                if self._pending.endswith(stop[:n]):
                    longest = n
                    break
        return longest

    def _release(self, n: int) -> str:
        out, self._pending = self._pending[:n], self._pending[n:]
        self.text += out
        return out
