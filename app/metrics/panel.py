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
    """The decode speed, its sparkline, and the turn's figures in sections: this reply, speculative
    decoding (only for a reply that drafted), memory. Each row is a label and a value with its unit."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("metricsPanel")
        self.setAccessibleName(self.tr("Metrics"))
        self.setAccessibleDescription(self.tr("Speed and memory figures of the latest reply, as the runtime measured them"))
        self.metrics: MetricsResult | None = None
        self.stats: dict = {}  # the turn's GenerationStats, as a message stores them
        self.updates = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.setSpacing(6)
        caption = QLabel(self.tr("Decode speed"))
        caption.setObjectName("metricsCaption")
        self.speed = QLabel("—")
        self.speed.setAccessibleName(self.tr("Decode speed"))
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 2.0)
        font.setWeight(QFont.Weight.DemiBold)
        self.speed.setFont(font)
        self.sparkline = Sparkline()
        self.sparkline.setAccessibleName(self.tr("Decode speed over the last 60 seconds"))
        span = QLabel(self.tr("last 60 s"))
        span.setObjectName("metricsHint")
        layout.addWidget(caption)
        layout.addWidget(self.speed)
        layout.addWidget(self.sparkline)
        layout.addWidget(span, alignment=Qt.AlignmentFlag.AlignRight)
        self.sections: dict[str, tuple[QLabel, QFormLayout]] = {}
        for section in (figures.REPLY, figures.SPECULATION, figures.MEMORY):
            heading = QLabel(figures.section_title(section))
            heading.setObjectName("metricsSection")
            form = QFormLayout()
            # A value too long to sit beside its label goes below it, whole, instead of wrapping mid-figure.
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
            form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
            form.setHorizontalSpacing(12)
            form.setVerticalSpacing(5)
            layout.addSpacing(6)
            layout.addWidget(heading)
            layout.addLayout(form)
            self.sections[section] = (heading, form)
        layout.addStretch(1)
        self.state = QLabel(self.tr("No reply yet"))
        self.state.setObjectName("metricsHint")
        self.state.setWordWrap(True)
        layout.addWidget(self.state)
        self._labels: dict[str, QLabel] = {}
        self._shown: list[tuple[str, str, str]] = []  # (section, key, label) of the rows on screen, in order
        self._place([figures.Row(key, figures.fixed_label(key), "—", section) for section, key in figures.FIXED_ROWS])
        self.setMinimumWidth(250)

    def value_of(self, key: str) -> str | None:
        label = self._labels.get(key)
        return label.text() if label is not None else None

    def label_of(self, key: str) -> str | None:
        """The row's name as shown, e.g. 'Time to first token'."""
        for _section, shown_key, text in self._shown:
            if shown_key == key:
                return text
        return None

    def section_visible(self, section: str) -> bool:
        return not self.sections[section][0].isHidden()

    def on_sample(self, metrics: MetricsResult) -> None:
        """A runtime.metrics result taken while a reply streams."""
        self.metrics = metrics
        live = metrics.generation
        if live is not None:
            self.stats = dataclasses.asdict(live)
            if live.completion_tokens > 1:
                self.sparkline.add(live.decode_tokens_per_s)
            self.state.setText(self.tr("Streaming…"))
        self._render()

    def on_turn_started(self) -> None:
        self.stats = {}
        self.state.setText(self.tr("Waiting for the first token…"))
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
        self.state.setText(figures.finish_words((stats or {}).get("finish_reason", "")))
        self._render()

    def _render(self) -> None:
        self.updates += 1
        speed = self.stats.get("decode_tokens_per_s")
        self.speed.setText(figures.speed(speed) if speed else "—")
        found = {row.key: row for row in figures.rows(self.metrics, self.stats)}
        fixed = [figures.Row(key, figures.fixed_label(key), "—", section) for section, key in figures.FIXED_ROWS]
        wanted = [found.pop(row.key, row) for row in fixed]
        # Rows that come and go (restored from cache, speculation, GPUs) go after the fixed rows of their section.
        order = {section: i for i, section in enumerate(self.sections)}
        rows = sorted(wanted + list(found.values()), key=lambda row: order[row.section])
        if [(r.section, r.key, r.label) for r in rows] != self._shown:
            self._place(rows)
        for row in rows:
            label = self._labels[row.key]
            if label.text() != row.value:
                label.setText(row.value)

    def _place(self, rows: list[figures.Row]) -> None:
        """Lay the rows out again; only when which rows are shown changes, not on every sample."""
        for _heading, form in self.sections.values():
            while form.rowCount():
                form.removeRow(0)
        self._labels.clear()
        for row in rows:
            value = self._labels[row.key] = QLabel(row.value)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setAlignment(Qt.AlignmentFlag.AlignRight)
            value.setWordWrap(True)  # a value longer than the panel is wide wraps instead of being cut off
            value.setAccessibleName(row.label)
            name = QLabel(row.label)
            name.setObjectName("metricsName")
            name.setBuddy(value)
            self.sections[row.section][1].addRow(name, value)
        for section, (heading, form) in self.sections.items():
            heading.setVisible(form.rowCount() > 0)
        self._shown = [(r.section, r.key, r.label) for r in rows]
