"""MetricsPoller: asks the runtime for runtime.metrics on a timer while a reply streams.

The runtime answers metrics at once even mid-reply (its reader thread does),
so this is a timer-driven request, never a wait: at most one is in flight.
It asks about the conversation on screen (`conversation()`): with two replies
streaming, the newest is not always the one the user looks at. A sample that
comes back after the user moved to another conversation is dropped.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from app.runtime_link import RuntimeLink
from runtime.protocol import MetricsParams, MetricsResult, RpcError, methods

INTERVAL_MS = 250  # four samples a second: the panel must move at least twice a second


class MetricsPoller(QObject):
    sig_sample = Signal(object)  # MetricsResult

    def __init__(self, link: RuntimeLink, parent: QObject | None = None, conversation: Callable[[], str | None] = lambda: None):
        super().__init__(parent)
        self.link = link
        self.conversation = conversation  # the id of the conversation on screen, whose figures are wanted
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
        asked = self.conversation()
        self.link.call(methods.RUNTIME_METRICS, MetricsParams(asked), on_result=lambda metrics: self._on_result(asked, metrics),
                       on_error=self._on_error, timeout_ms=5_000)

    def _on_result(self, asked: str | None, metrics: MetricsResult) -> None:
        self._in_flight = False
        if asked == self.conversation():  # else the user has moved on: the figures are another conversation's
            self.sig_sample.emit(metrics)

    def _on_error(self, _error: RpcError) -> None:
        self._in_flight = False
