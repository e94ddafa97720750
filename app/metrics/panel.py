"""The metrics panel: decode speed with a 60 s sparkline, and rows of the turn's figures."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.metrics import figures
from app.metrics.sparkline import Sparkline
from app.storage.reply_record import ReplyRecord
from app.storage.store import COMPLETE, Message
from runtime.protocol import GenerationStats, MetricsResult

DEFAULT_WIDTH = 300  # the panel's width in a new window: every figure fits beside its label (only free text wraps)


class FigureRow(QWidget):
    """One figure: its name on the left and its value on the right, or the value on a line of its own
    below the name when both do not fit the panel's width. A figure is never cut or split ("327 /
    tokens"); only free text (why speculation was off) wraps."""

    GAP = 8

    def __init__(self, name: str, value: str, free_text: bool = False, parent: QWidget | None = None):
        super().__init__(parent)
        self.name = QLabel(name, self)
        self.name.setObjectName("metricsName")
        self.value = QLabel(value, self)
        self.value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        self.value.setWordWrap(free_text)
        self.value.setAccessibleName(name)
        self.name.setBuddy(self.value)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def set_value(self, text: str) -> None:
        fitted = self._fits(self.width())
        self.value.setText(text)
        if self._fits(self.width()) != fitted or self.value.wordWrap():
            self.updateGeometry()
        self._arrange()

    def _fits(self, width: int) -> bool:
        if self.value.wordWrap():
            return False
        return self.name.sizeHint().width() + self.GAP + self.value.sizeHint().width() <= width

    def _value_height(self, width: int) -> int:
        return self.value.heightForWidth(width) if self.value.wordWrap() else self.value.sizeHint().height()

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        line = max(self.name.sizeHint().height(), self.value.sizeHint().height())
        return line if self._fits(width) else self.name.sizeHint().height() + 2 + self._value_height(width)

    def sizeHint(self) -> QSize:
        return QSize(self.name.sizeHint().width() + self.GAP + self.value.sizeHint().width(), self.heightForWidth(10_000))

    def minimumSizeHint(self) -> QSize:
        return QSize(self.name.minimumSizeHint().width(), self.name.sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        width, name_height = self.width(), self.name.sizeHint().height()
        if self._fits(width):
            self.name.setGeometry(0, 0, self.name.sizeHint().width(), name_height)
            value_width = self.value.sizeHint().width()
            self.value.setGeometry(width - value_width, 0, value_width, self.value.sizeHint().height())
        else:
            self.name.setGeometry(0, 0, width, name_height)
            self.value.setGeometry(0, name_height + 2, width, self._value_height(width))


class MetricsPanel(QFrame):
    """The decode speed, its sparkline, and the turn's figures in sections: this reply, speculative
    decoding (only for a reply that drafted), memory. Each row is a label and a value with its unit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("metricsPanel")
        self.setAccessibleName(self.tr("Metrics"))
        self.setAccessibleDescription(self.tr("Speed and memory figures of the latest reply, as the runtime measured them"))
        self.metrics: MetricsResult | None = None
        self.stats: GenerationStats | None = None  # the turn's figures (None: none yet)
        self.draft_model = ""  # the draft model loaded with the target (its file name), shown with the speculation figures
        self.parallel_asked = 0  # the parallel replies the load asked for (0: not known)
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
        self.sections: dict[str, tuple[QLabel, QVBoxLayout]] = {}
        for section in (figures.REPLY, figures.SPECULATION, figures.MEMORY):
            heading = QLabel(figures.section_title(section))
            heading.setObjectName("metricsSection")
            rows = QVBoxLayout()
            rows.setSpacing(5)
            layout.addSpacing(6)
            layout.addWidget(heading)
            layout.addLayout(rows)
            self.sections[section] = (heading, rows)
        layout.addStretch(1)
        self.state = QLabel(self.tr("No reply yet"))
        self.state.setObjectName("metricsHint")
        self.state.setWordWrap(True)
        layout.addWidget(self.state)
        self._rows: dict[str, FigureRow] = {}
        self._shown: list[tuple[str, str, str]] = []  # (section, key, label) of the rows on screen, in order
        self._place([figures.Row(key, figures.fixed_label(key), "—", section) for section, key in figures.FIXED_ROWS])
        self.setMinimumWidth(250)

    def value_of(self, key: str) -> str | None:
        row = self._rows.get(key)
        return row.value.text() if row is not None else None

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
            self.stats = live
            if live.completion_tokens > 1:
                self.sparkline.add(live.decode_tokens_per_s)
            self.state.setText(self.tr("Streaming…"))
        self._render()

    def on_turn_started(self) -> None:
        self.stats = None
        self.state.setText(self.tr("Waiting for the first token…"))
        self._render()

    def on_turn_finished(self, record: ReplyRecord | None, metrics: MetricsResult | None = None, state: str = COMPLETE) -> None:
        """The turn's final figures, as the runtime returned them with the reply; they stay until the next turn.
        `state`: how the reply was stored (app/storage/store.py), which says why one with no record ended."""
        if record is not None and record.stats is not None:
            self.stats = record.stats
            if record.stats.decode_tokens_per_s:
                self.sparkline.add(record.stats.decode_tokens_per_s)
        if metrics:
            self.metrics = metrics
        self.state.setText(figures.finish_words(record.finish_reason if record is not None else None, state))
        self._render()

    def set_parallel_asked(self, asked: int) -> None:
        """The parallel replies the load asked for: the row says when fewer were loaded."""
        if asked != self.parallel_asked:
            self.parallel_asked = asked
            self._render()

    def set_draft_model(self, name: str) -> None:
        """The draft model loaded with the target now ("" for none)."""
        if name != self.draft_model:
            self.draft_model = name
            self._render()

    def show_conversation(self, last: Message | None) -> None:
        """Another conversation is on screen, with no reply streaming: its last reply as stored (none yet:
        dashes). The runtime figures stay until a sample for this conversation replaces them."""
        record = last.record if last is not None else None
        self.stats = record.stats if record is not None else None
        if last is None:
            self.state.setText(self.tr("No reply yet"))
        else:
            self.state.setText(figures.finish_words(record.finish_reason if record is not None else None, last.state))
        self._render()

    def _render(self) -> None:
        self.updates += 1
        speed = self.stats.decode_tokens_per_s if self.stats is not None else 0.0
        self.speed.setText(figures.speed(speed) if speed else "—")
        found = {row.key: row for row in figures.rows(self.metrics, self.stats, self.draft_model, self.parallel_asked)}
        fixed = [figures.Row(key, figures.fixed_label(key), "—", section) for section, key in figures.FIXED_ROWS]
        wanted = [found.pop(row.key, row) for row in fixed]
        # Rows that come and go (restored from cache, speculation, GPUs) go after the fixed rows of their section.
        order = {section: i for i, section in enumerate(self.sections)}
        rows = sorted(wanted + list(found.values()), key=lambda row: order[row.section])
        for key, anchor in figures.PLACED_AFTER.items():
            moved = next((r for r in rows if r.key == key), None)
            if moved is not None and any(r.key == anchor for r in rows if r is not moved):
                rows.remove(moved)
                rows.insert(next(i for i, r in enumerate(rows) if r.key == anchor) + 1, moved)
        if [(r.section, r.key, r.label) for r in rows] != self._shown:
            self._place(rows)
        for row in rows:
            shown = self._rows[row.key]
            if shown.value.text() != row.value:
                shown.set_value(row.value)

    def _place(self, rows: list[figures.Row]) -> None:
        """Lay the rows out again; only when which rows are shown changes, not on every sample."""
        for section, (_heading, column) in self.sections.items():
            for shown in [r for r in self._rows.values() if column.indexOf(r) >= 0]:
                column.removeWidget(shown)
                shown.hide()
                shown.deleteLater()
        self._rows.clear()
        for row in rows:
            shown = self._rows[row.key] = FigureRow(row.label, row.value, free_text=row.key in figures.FREE_TEXT_ROWS)
            self.sections[row.section][1].addWidget(shown)
        for heading, column in self.sections.values():
            heading.setVisible(column.count() > 0)
        self._shown = [(r.section, r.key, r.label) for r in rows]
