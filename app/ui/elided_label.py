"""A one-line label that gives up width: its text is cut with "…" to the width it gets.

A plain QLabel will not be narrower than its whole text, so a long conversation title or model name set the
window's minimum width (1,670 px with a long title and model name, bench/window_width.py: wider than half of a
1920 px screen, where a window snapped to one side must fit).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

MIN_WIDTH = 48  # a few letters and the "…"


class ElidedLabel(QLabel):
    """`whole_in_tooltip`: while the text is cut, its tooltip holds it whole (a label with a tooltip of its own keeps that).
    `keeps`: the width it gives up last, before which its neighbours in a layout give up theirs (its whole text's,
    if that is narrower; never under MIN_WIDTH): the layout treats it as the label's minimum."""

    def __init__(self, text: str = "", parent: QWidget | None = None, whole_in_tooltip: bool = False, keeps: int = MIN_WIDTH):
        super().__init__(parent)
        self.whole = ""
        self.whole_in_tooltip = whole_in_tooltip
        self.keeps = keeps
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)

    def setText(self, text: str) -> None:  # type: ignore[override]  # QLabel's slot, kept as one
        self.whole = text
        self.setAccessibleName(text)  # a screen reader reads it whole
        self.updateGeometry()
        self._cut()

    def text(self) -> str:  # type: ignore[override]
        return self.whole

    def shown(self) -> str:
        """What the label shows now: the text, or its beginning and "…"."""
        return super().text()

    def sizeHint(self) -> QSize:
        margins = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(self.whole) + margins.left() + margins.right() + 2 * self.margin() + 2
        return QSize(width, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(max(MIN_WIDTH, min(self.keeps, self.sizeHint().width())), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._cut()

    def _cut(self) -> None:
        room = self.contentsRect().width() - 2 * self.margin()
        shown = self.fontMetrics().elidedText(self.whole, Qt.TextElideMode.ElideRight, max(room, 0))
        if shown != super().text():
            super().setText(shown)
        if self.whole_in_tooltip:
            self.setToolTip(self.whole if shown != self.whole else "")
