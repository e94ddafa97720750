"""Transfer speed over a sliding window, and the time left at that speed."""

from __future__ import annotations

import collections
import time

WINDOW_S = 3.0


class SpeedMeter:
    def __init__(self, window_s: float = WINDOW_S):
        self._window = window_s
        self._samples: collections.deque[tuple[float, int]] = collections.deque()

    def add(self, total_bytes: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._samples.append((now, total_bytes))
        while len(self._samples) > 2 and now - self._samples[0][0] > self._window:
            self._samples.popleft()

    def reset(self) -> None:
        self._samples.clear()

    def speed(self, now: float | None = None) -> float:
        """Bytes per second; it falls to zero when nothing arrives (a stall shows as a stall)."""
        if not self._samples:
            return 0.0
        now = time.monotonic() if now is None else now
        self.add(self._samples[-1][1], now)
        (t0, b0), (t1, b1) = self._samples[0], self._samples[-1]
        return (b1 - b0) / (t1 - t0) if t1 > t0 else 0.0


def eta_seconds(remaining: int, speed: float) -> float | None:
    return remaining / speed if speed > 0 else None
