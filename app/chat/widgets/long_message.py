"""A message of yours too long to show whole (app/chat/long_text.py): its first and last lines as typed,
"⋯ 20,606 more lines" and Show all between them; Show all puts the whole text in a box that scrolls."""

from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from app.chat.long_text import Fold, fold
from app.chat.widgets.markdown_view import AutoHeightBrowser
from app.chat.words import fold_summary, whole_summary
from app.ui.accessibility import described

WHOLE_LINES = 24  # the height of the box the whole text scrolls in


class LongMessage(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.text = ""
        self.folded: Fold | None = None
        self.expanded = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.head = AutoHeightBrowser()
        row = QHBoxLayout()
        row.setContentsMargins(2, 0, 0, 0)
        self.summary = QLabel()
        self.summary.setObjectName("hint")
        self.toggle = QToolButton()
        self.toggle.setObjectName("foldToggle")
        self.toggle.setAutoRaise(True)
        self.toggle.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.toggle.clicked.connect(lambda: self.set_expanded(not self.expanded))
        row.addWidget(self.summary)
        row.addWidget(self.toggle)
        row.addStretch(1)
        self.tail = AutoHeightBrowser()
        self.whole = QPlainTextEdit()  # lays out only the lines in sight, where a text view lays out all of them
        self.whole.setObjectName("wholeMessage")
        self.whole.setReadOnly(True)
        self.whole.setFrameShape(QFrame.Shape.NoFrame)
        self.whole.setTabChangesFocus(True)
        self.whole.verticalScrollBar().setObjectName("slimScroll")  # app/ui/theme.py
        self.whole.setFixedHeight(WHOLE_LINES * self.whole.fontMetrics().lineSpacing() + 12)
        self.whole.hide()
        layout.addWidget(self.head)
        layout.addLayout(row)
        layout.addWidget(self.tail)
        layout.addWidget(self.whole)

    def set_accessible_name(self, name: str) -> None:
        self.head.setAccessibleName(self.tr("{name}, its first lines").format(name=name))
        self.tail.setAccessibleName(self.tr("{name}, its last lines").format(name=name))
        self.whole.setAccessibleName(self.tr("{name}, whole").format(name=name))

    def show_text(self, text: str) -> bool:
        """Show `text` folded (its head and tail); False, showing nothing, if it is short enough to show whole."""
        if text == self.text:
            return self.folded is not None
        self.text, self.folded, self.expanded = text, fold(text), False
        if self.folded is None:
            self.whole.clear()
            return False
        self.head.setPlainText(self.folded.head)
        self.tail.setPlainText(self.folded.tail)
        self._show()
        return True

    def show_words(self, words: Sequence[str]) -> bool:
        """A search's hit: where none of the words shows folded but the text holds one, the text is shown whole with
        the first one found selected and in sight. Whether it was."""
        folded = self.folded
        if folded is None or not words:
            return False
        shown = f"{folded.head}\n{folded.tail}".casefold()
        if any(word.casefold() in shown for word in words):
            return False
        document = self.whole.document()
        if document.characterCount() <= 1:
            self.whole.setPlainText(self.text)
        found = [cursor for word in words if not (cursor := document.find(word)).isNull()]  # Qt's find: any case
        if not found:
            self._show()  # folded as it was, with no second copy of the text kept
            return False
        self.set_expanded(True)
        self.whole.setTextCursor(min(found, key=lambda cursor: cursor.position()))
        self.whole.centerCursor()
        return True

    def set_expanded(self, expanded: bool) -> None:
        self.expanded = expanded
        self._show()
        if expanded:
            self.whole.setFocus(Qt.FocusReason.OtherFocusReason)

    def _show(self) -> None:
        folded = self.folded
        if folded is None:
            return
        expanded = self.expanded
        if expanded and self.whole.document().characterCount() <= 1:
            self.whole.setPlainText(self.text)
        elif not expanded:
            self.whole.clear()  # a folded message keeps no second copy of its megabytes on screen
        self.head.setVisible(not expanded)
        self.tail.setVisible(not expanded and bool(folded.tail))
        self.whole.setVisible(expanded)
        self.summary.setText(whole_summary(folded) if expanded else fold_summary(folded))
        if expanded:
            self.toggle.setText(self.tr("Show less"))
            described(self.toggle, self.tr("Show less"), self.tr("Show only the first and last lines of this message"))
        else:
            self.toggle.setText(self.tr("Show all"))
            described(self.toggle, self.tr("Show all"), self.tr("Show the whole message in a box that scrolls"))
