"""Citations under a reply: which document and where (page, lines), each opening to the text the reply was given."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLabel, QToolButton, QVBoxLayout, QWidget

from app.attachments import words
from app.storage.attachments import StoredCitation
from app.ui.accessibility import discard


class ToggleButton(QToolButton):
    """A citation's heading: Enter toggles it too (a tool button takes Space only)."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.click()
            return
        super().keyPressEvent(event)


class CitationItem(QWidget):
    """One citation: a button with its source and place (Enter or a click opens it), the cited text below it."""

    def __init__(self, citation: StoredCitation, parent: QWidget | None = None):
        super().__init__(parent)
        self.citation = citation
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.button = ToggleButton()
        self.button.setObjectName("citation")
        self.button.setText(words.citation_title(citation))
        self.button.setCheckable(True)
        self.button.setAutoRaise(True)
        self.button.setArrowType(Qt.ArrowType.RightArrow)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.button.setAccessibleName(self.tr("Source: {title}").format(title=words.citation_title(citation)))
        self.button.setAccessibleDescription(self.tr("Shows or hides the text the reply was given from it"))
        self.text = QLabel(citation.text)
        self.text.setObjectName("citationText")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.hide()
        self.button.toggled.connect(self._on_toggled)
        layout.addWidget(self.button)
        layout.addWidget(self.text)

    def _on_toggled(self, shown: bool) -> None:
        self.button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.text.setVisible(shown)

    @property
    def expanded(self) -> bool:
        return self.button.isChecked()


class Citations(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("citations")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 4, 0, 0)
        self._layout.setSpacing(0)
        self.heading = QLabel(self.tr("Sources"))
        self.heading.setObjectName("hint")
        self._layout.addWidget(self.heading)
        self.items: list[CitationItem] = []
        self._shown: list[StoredCitation] = []
        self.hide()

    def show_citations(self, citations: list[StoredCitation]) -> None:
        if citations == self._shown:
            return
        self._shown = list(citations)
        for item in self.items:
            discard(item)
        self.items = [CitationItem(c) for c in citations]
        for item in self.items:
            self._layout.addWidget(item)
        self.setVisible(bool(self.items))
