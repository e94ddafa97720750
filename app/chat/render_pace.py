"""How often a streaming reply is drawn: 20 times a second while drawing is cheap, less often as it grows costly.

Where the model decodes on every core (the runtime's default), each millisecond the window spends
drawing a reply is taken from the model, and more than that: the decoding threads wait for one
another at every step, so one descheduled thread holds them all. Drawing a reply costs more as it
grows (a long list or code block is laid out and painted again whole each time it changes), so a
fixed pace takes an ever larger share. bench/window_decode.py measures what that share costs.

The pace keeps the window's work within BUDGET of one core. At each flush it reads the GUI thread's
own CPU time (time.thread_time) spent since the last flush (laying out, painting, the metrics panel,
saving checkpoints), less the time spent reading the runtime's lines (`reading`: that follows the
model's tokens, not the pace), and spaces the next flush so that cost stays within the budget. It
never waits longer than SLOWEST_MS, so the text still moves several times a second.
"""

from __future__ import annotations

import collections
import time
from typing import Callable

FASTEST_MS = 50  # 20 draws a second: as smooth as text needs
SLOWEST_MS = 200  # at least five draws a second, however long the reply
BUDGET = 0.05  # of one core, for the window's work while a reply streams
# The flushes whose mean cost sets the pace: enough that one slow frame does not halve it, few enough that a lasting
# change soon does. A mean, not a median: on Windows a thread's CPU time advances in clock ticks (15.6 ms), so a
# flush reads 0 or a whole tick, and only the mean of many is the true cost.
_WINDOW = 10


class RenderPace:
    def __init__(self, clock: Callable[[], float] = time.thread_time, reading: Callable[[], float] = lambda: 0.0):
        self._clock = clock
        self._reading = reading  # CPU seconds spent reading the runtime's output so far (a running total)
        self._last: tuple[float, float] | None = None
        self._costs: collections.deque[float] = collections.deque(maxlen=_WINDOW)  # the window's work in the last flushes

    def restart(self) -> None:
        """Replies begin streaming after a pause: they start short, so cheap to draw."""
        self._last = None
        self._costs.clear()

    def tick(self) -> int:
        """At each flush: the milliseconds to the next, from the work done since the last flush."""
        now = (self._clock(), self._reading())
        if self._last is not None:
            self._costs.append(max(0.0, (now[0] - self._last[0]) - (now[1] - self._last[1])))
        self._last = now
        cost = sum(self._costs) / len(self._costs) if self._costs else 0.0
        return int(min(SLOWEST_MS, max(FASTEST_MS, cost / BUDGET * 1000)))
