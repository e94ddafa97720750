"""The metrics panel: decode speed with a 60 s sparkline, and rows of the turn's figures."""

from __future__ import annotations

import dataclasses
import time
from collections import deque

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QFormLayout, QFrame, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.metrics import figures
from runtime.protocol import MetricsResult

WINDOW_S = 60.0


class Sparkline(QWidget):
    """The last 60 s of decode speed; the line is drawn from samples, nothing is interpolated."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.samples: deque[tuple[float, float]] = deque()
        self.setMinimumHeight(56)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def add(self, value: float, at: float | None = None) -> None:
        now = time.monotonic() if at is None else at
        self.samples.append((now, value))
        while self.samples and self.samples[0][0] < now - WINDOW_S:
            self.samples.popleft()
        self.update()

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(1, 4, -1, -2)
        palette = self.palette()
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1, Qt.PenStyle.DotLine))
        painter.drawLine(rect.bottomLeft(), rect.bottomRight())
        if len(self.samples) < 2:
            return
        now = self.samples[-1][0]
        top = max(v for _t, v in self.samples) * 1.15 or 1.0
        path = QPainterPath()
        for i, (t, v) in enumerate(self.samples):
            point = QPointF(rect.right() - (now - t) / WINDOW_S * rect.width(), rect.bottom() - v / top * rect.height())
            path.moveTo(point) if i == 0 else path.lineTo(point)
        accent = palette.color(QPalette.ColorRole.Highlight)
        fill = QPainterPath(path)
        fill.lineTo(QPointF(rect.right(), rect.bottom()))
        fill.lineTo(QPointF(rect.right() - (now - self.samples[0][0]) / WINDOW_S * rect.width(), rect.bottom()))
        fill.closeSubpath()
        shade = QColor(accent)
        shade.setAlpha(40)
        painter.fillPath(fill, shade)
        painter.setPen(QPen(accent, 1.6))
        painter.drawPath(path)


class MetricsPanel(QFrame):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("metricsPanel")
        self.metrics: MetricsResult | None = None
        self.stats: dict = {}  # the turn's GenerationStats, as a message stores them
        self.updates = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.setSpacing(6)
        caption = QLabel("Decode speed")
        caption.setObjectName("metricsCaption")
        self.speed = QLabel("—")
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 2.0)
        font.setWeight(QFont.Weight.DemiBold)
        self.speed.setFont(font)
        self.sparkline = Sparkline()
        span = QLabel("last 60 s")
        span.setObjectName("metricsHint")
        layout.addWidget(caption)
        layout.addWidget(self.speed)
        layout.addWidget(self.sparkline)
        layout.addWidget(span, alignment=Qt.AlignmentFlag.AlignRight)
        self.form = QFormLayout()
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        self.form.setHorizontalSpacing(12)
        self.form.setVerticalSpacing(5)
        layout.addLayout(self.form)
        layout.addStretch(1)
        self.state = QLabel("No reply yet")
        self.state.setObjectName("metricsHint")
        self.state.setWordWrap(True)
        layout.addWidget(self.state)
        self._labels: dict[str, QLabel] = {}
        for key, text in figures.FIXED_ROWS:
            self._add_row(key, text).setText("—")
        self.setMinimumWidth(250)

    def _add_row(self, key: str, text: str) -> QLabel:
        label = self._labels[key] = QLabel()
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setAlignment(Qt.AlignmentFlag.AlignRight)
        label.setWordWrap(True)  # a long value wraps in the narrow panel instead of being cut off
        name = QLabel(text)
        name.setObjectName("metricsName")
        name.setWordWrap(True)
        self.form.addRow(name, label)
        return label

    def value_of(self, key: str) -> str | None:
        label = self._labels.get(key)
        return label.text() if label is not None else None

    def on_sample(self, metrics: MetricsResult) -> None:
        """A runtime.metrics result taken while a reply streams."""
        self.metrics = metrics
        live = metrics.generation
        if live is not None:
            self.stats = dataclasses.asdict(live)
            if live.completion_tokens > 1:
                self.sparkline.add(live.decode_tokens_per_s)
            self.state.setText("Streaming…")
        self._render()

    def on_turn_started(self) -> None:
        self.stats = {}
        self.state.setText("Waiting for the first token…")
        self._render()

    def on_turn_finished(self, stats: dict | None, metrics: MetricsResult | None = None) -> None:
        """The turn's final figures, as the runtime returned them with the reply; they stay until the next turn."""
        if stats:
            self.stats = dict(stats)
            speed = stats.get("decode_tokens_per_s")
            if speed:
                self.sparkline.add(speed)
        if metrics:
            self.metrics = metrics
        reason = (stats or {}).get("finish_reason")
        self.state.setText(f"Last reply: {reason}" if reason else "Last reply")
        self._render()

    def _render(self) -> None:
        self.updates += 1
        speed = self.stats.get("decode_tokens_per_s")
        self.speed.setText(f"{speed:,.1f} tok/s" if speed else "—")
        fixed = {key for key, _text in figures.FIXED_ROWS}
        seen = set()
        for row in figures.rows(self.metrics, self.stats):
            seen.add(row.key)
            label = self._labels.get(row.key) or self._add_row(row.key, row.label)
            if label.text() != row.value:
                label.setText(row.value)
        for key in list(self._labels):
            if key in seen:
                continue
            if key in fixed:
                self._labels[key].setText("—")
            else:  # a figure another feature reported for an earlier turn only
                self.form.removeRow(self._labels.pop(key))
