"""StallProbe: how long the GUI event loop went without running a timer, measured with a QTimer.

A 10 ms timer records the gap between its ticks; the longest gap minus the
interval is the longest stall. It keeps two figures: the wall-clock gap, and
the CPU time the GUI thread itself spent inside that gap. On a machine shared
with other busy processes the first also counts time the OS gave to others;
the second is the work the app did without returning to its event loop. Tests assert the bound with it; LOKAL_STALL_LOG=1
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
        self.longest_cpu_ms = 0.0
        self.ticks = 0
        self._last: float | None = None
        self._last_cpu = 0.0
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
        self.longest_cpu_ms = 0.0
        self.ticks = 0
        self._last = time.perf_counter()
        self._last_cpu = time.thread_time()

    def _on_tick(self) -> None:
        now = time.perf_counter()
        cpu = time.thread_time()
        if self._last is not None:
            stall = (now - self._last) * 1000 - self.interval_ms
            if stall > self.longest_ms:
                self.longest_ms = stall
            busy = (cpu - self._last_cpu) * 1000
            if busy > self.longest_cpu_ms:
                self.longest_cpu_ms = busy
            if self.report_over_ms is not None and stall > self.report_over_ms:
                log.warning("the GUI thread was blocked for %.0f ms", stall)
        self._last = now
        self._last_cpu = cpu
        self.ticks += 1
