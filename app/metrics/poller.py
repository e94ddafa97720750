"""MetricsPoller: asks the runtime for runtime.metrics on a timer while a reply streams.

The runtime answers metrics at once even mid-reply (its reader thread does),
so this is a timer-driven request, never a wait: at most one is in flight.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from app.runtime_link import RuntimeLink
from runtime.protocol import MetricsResult

INTERVAL_MS = 250  # four samples a second: the panel must move at least twice a second


class MetricsPoller(QObject):
    sig_sample = Signal(object)  # MetricsResult

    def __init__(self, link: RuntimeLink, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self._on_tick)
        self._in_flight = False

    def start(self) -> None:
        self._timer.start()
        self._on_tick()

    def stop(self) -> None:
        self._timer.stop()

    def poll_once(self) -> None:
        self._on_tick()

    def _on_tick(self) -> None:
        if self._in_flight:
            return
        self._in_flight = True
        self.link.call("runtime.metrics", None, on_result=self._on_result, on_error=self._on_error, timeout_ms=5_000)

    def _on_result(self, metrics: MetricsResult) -> None:
        self._in_flight = False
        self.sig_sample.emit(metrics)

    def _on_error(self, _error) -> None:
        self._in_flight = False
