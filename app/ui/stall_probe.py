"""StallProbe: how long the GUI event loop went without running a timer, measured with a QTimer.

A 10 ms timer records the gap between its ticks; the longest gap minus the
interval is the longest stall. It keeps two figures: the wall-clock gap, and
the same gap less the time the GUI thread sat ready on the OS run queue while
other processes had the CPU (Linux reports it in /proc/thread-self/schedstat).
On a machine shared with other busy processes the first also counts time the
OS gave to others; the second is the app's own stall: work it did, or a
blocking wait it made, without returning to its event loop. Where schedstat is
missing the two are the same. Tests assert the bound with it; LOKAL_STALL_LOG=1
logs every stall over 50 ms while the app runs.
"""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QObject, Qt, QTimer

log = logging.getLogger("lokal.app.stall")


class StallProbe(QObject):
    def __init__(self, interval_ms: int = 10, report_over_ms: float | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.interval_ms = interval_ms
        self.report_over_ms = report_over_ms
        self.longest_ms = 0.0
        self.longest_own_ms = 0.0
        self.ticks = 0
        self._last: float | None = None
        self._last_queued = 0.0
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_tick)

    def start(self) -> None:
        self.reset()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def reset(self) -> None:
        self.longest_ms = 0.0
        self.longest_own_ms = 0.0
        self.ticks = 0
        self._last = time.perf_counter()
        self._last_queued = _run_queue_wait_s()

    def _on_tick(self) -> None:
        now = time.perf_counter()
        queued = _run_queue_wait_s()
        if self._last is not None:
            stall = (now - self._last) * 1000 - self.interval_ms
            if stall > self.longest_ms:
                self.longest_ms = stall
            own = stall - (queued - self._last_queued) * 1000
            if own > self.longest_own_ms:
                self.longest_own_ms = own
            if self.report_over_ms is not None and stall > self.report_over_ms:
                log.warning("the GUI thread was blocked for %.0f ms", stall)
        self._last = now
        self._last_queued = queued
        self.ticks += 1


def _run_queue_wait_s() -> float:
    """Seconds this thread has spent runnable but waiting for a CPU (0.0 where the OS does not say)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0
