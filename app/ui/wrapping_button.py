"""A push button whose text wraps onto more lines where the button is narrower than it.

A QPushButton's text never wraps, so the button is never narrower than its whole text: a long one (an example
question on the welcome, in Indonesian) made the chat wider than its pane, cut on the right.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

PADDING = (10, 6, 10, 6)  # around the text: left, top, right, bottom


class WrappingButton(QPushButton):
    def __init__(self, text: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.label = QLabel(text)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)  # a click on the words is the button's
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(*PADDING)
        self.row.addWidget(self.label)
        self.setAccessibleName(text)  # the button's own text is empty: a screen reader reads this
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def text(self) -> str:  # type: ignore[override]  # the words shown, which the label holds
        return self.label.text()

    def sizeHint(self) -> QSize:
        """On one line, where there is room for it."""
        left, _top, right, _bottom = PADDING
        width = self.label.fontMetrics().horizontalAdvance(self.label.text()) + left + right + 2
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        width = self.row.minimumSize().width()  # the longest word's, and the padding
        return QSize(width, self.heightForWidth(width))

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self.row.totalHeightForWidth(width)
