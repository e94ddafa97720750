"""The decode speed of the last 60 s, drawn against the clock.

The line moves left as time passes, idle or not, so a reply of a minute ago is not drawn as if it were
decoding now. A stretch with no decoding (between replies) is left empty: a line drawn across it would
say the model decoded at that speed all along. Nothing is interpolated within a stretch either: the line
joins the samples the runtime gave.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QHideEvent, QPainter, QPainterPath, QPaintEvent, QPalette, QPen, QShowEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.metrics.poller import INTERVAL_MS

WINDOW_S = 60.0
# Samples further apart than this are two stretches of decoding. The poller samples every INTERVAL_MS while
# a reply streams; a runtime busy loading can answer a sample late, so a few missed ones are not a gap.
GAP_S = 6 * INTERVAL_MS / 1000
FASTEST_TICK_MS = 250  # the line moves a pixel at a time where the chart is narrow, but no more often than this
DOT_RADIUS = 1.6  # a stretch of one sample (a reply of a second) is a dot, not nothing


def stretches(samples: Iterable[tuple[float, float]], gap_s: float = GAP_S) -> list[list[tuple[float, float]]]:
    """`samples` (time, value), in time order, cut where two are more than `gap_s` apart."""
    runs: list[list[tuple[float, float]]] = []
    for sample in samples:
        if runs and sample[0] - runs[-1][-1][0] <= gap_s:
            runs[-1].append(sample)
        else:
            runs.append([sample])
    return runs


class Sparkline(QWidget):
    def __init__(self, parent: QWidget | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self.clock = clock
        self.samples: deque[tuple[float, float]] = deque()
        self.setMinimumHeight(56)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._tick = QTimer(self)  # while a sample is in the window: the line moves with the clock
        self._tick.timeout.connect(self._on_tick)

    @property
    def moving(self) -> bool:
        return self._tick.isActive()

    def add(self, value: float, at: float | None = None) -> None:
        self.samples.append((self.clock() if at is None else at, value))
        self._forget_old(self.samples[-1][0])
        self._follow_clock()
        self.update()

    def _forget_old(self, now: float) -> None:
        while self.samples and self.samples[0][0] < now - WINDOW_S:
            self.samples.popleft()

    def _follow_clock(self) -> None:
        if self.samples and self.isVisible():
            self._tick.start(max(FASTEST_TICK_MS, int(WINDOW_S * 1000 / max(1, self.width()))))
        else:
            self._tick.stop()

    def _on_tick(self) -> None:
        self._forget_old(self.clock())
        self._follow_clock()
        self.update()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._forget_old(self.clock())
        self._follow_clock()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._tick.stop()  # nothing to move while the panel is hidden; showEvent catches up

    def lines(self, rect: QRectF, now: float) -> list[list[QPointF]]:
        """Each stretch of the last WINDOW_S as points in `rect`: now at its right edge, the fastest sample 15 % below its top."""
        shown = [(t, v) for t, v in self.samples if now - WINDOW_S <= t <= now]
        if not shown:
            return []
        top = max(v for _t, v in shown) * 1.15 or 1.0
        return [
            [QPointF(rect.right() - (now - t) / WINDOW_S * rect.width(), rect.bottom() - v / top * rect.height()) for t, v in run]
            for run in stretches(shown)
        ]

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(1, 4, -1, -2)
        palette = self.palette()
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1, Qt.PenStyle.DotLine))
        painter.drawLine(rect.bottomLeft(), rect.bottomRight())
        accent = palette.color(QPalette.ColorRole.Highlight)
        shade = QColor(accent)
        shade.setAlpha(40)
        for points in self.lines(rect, self.clock()):
            if len(points) == 1:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(accent)
                painter.drawEllipse(points[0], DOT_RADIUS, DOT_RADIUS)
                continue
            path = QPainterPath(points[0])
            for point in points[1:]:
                path.lineTo(point)
            fill = QPainterPath(path)
            fill.lineTo(QPointF(points[-1].x(), rect.bottom()))
            fill.lineTo(QPointF(points[0].x(), rect.bottom()))
            fill.closeSubpath()
            painter.fillPath(fill, shade)
            painter.setPen(QPen(accent, 1.6))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
