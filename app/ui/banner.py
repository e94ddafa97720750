"""The banner above the conversation: what went wrong, in words, until the user dismisses it.

While the database refuses writes it also offers Retry (the replies are kept in memory meanwhile, and
written once it takes them again).
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from app.ui import icons
from app.ui.accessibility import described


class StoreProblem(Protocol):
    """Why the database refuses writes (app.storage.StoreUnavailable), said in words."""

    @property
    def message(self) -> str: ...


class Banner(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("banner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 8, 8, 8)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAccessibleName(self.tr("Message"))
        close = self.close_button = QToolButton()
        close.setIcon(icons.icon("close"))
        close.setAutoRaise(True)
        close.setToolTip(self.tr("Dismiss"))
        described(close, self.tr("Dismiss"), self.tr("Hide this message"))
        close.clicked.connect(self.hide)
        # Shown while the database refuses writes: they are kept and written once it works again.
        self.retry = QPushButton(self.tr("Retry"))
        self.retry.setToolTip(self.tr("Try to save again"))
        described(self.retry, self.tr("Retry"), self.tr("Try to save again"))
        self.retry.hide()
        row.addWidget(self.label, 1)
        row.addWidget(self.retry, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.about: str | None = None  # the conversation what is said concerns
        self.hide()

    def say(self, text: str, retry: bool = False, about: str | None = None) -> None:
        """Show `text`, with the Retry button if `retry`; `about`: the conversation it concerns (a reply that failed),
        None for what concerns the whole app (a crash, the database)."""
        self.label.setText(text)
        self.retry.setVisible(retry)
        self.about = about
        self.show()

    def leave(self, conversation: str | None) -> None:
        """`conversation` is on screen now: what was said about another one goes (the failed reply says it there too)."""
        if self.about is not None and self.about != conversation:
            self.hide()

    def say_store_problem(self, problem: StoreProblem | None, waiting: int) -> bool:
        """The database refuses writes (`waiting` message updates are kept until it takes them), or None: it takes
        them again, and the problem it said is gone; True then."""
        if problem is None:
            saved = self.retry.isVisible()
            if saved:
                self.hide()
            return saved
        kept = "\n" + self.tr("%n message update(s) are kept until they can be saved.", "", waiting) if waiting else ""
        self.say(f"{problem.message}{kept}", retry=True)
        return False
