"""The search box: Ctrl+K across every conversation, Ctrl+F within the one on screen.

Only renders: the SearchService searches (off the GUI thread) and the SearchResultsModel holds the hits.
Typing waits a moment before it searches (DEBOUNCE_MS), so a word typed fast is one search, not five.
Enter or a double click opens the chosen hit (sig_open); Esc closes.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QDialog, QLabel, QLineEdit, QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QVBoxLayout, QWidget,
)

from app.search.results_model import ConversationIdRole, DateRole, MessageIdRole, SearchResultsModel, SnippetHtmlRole, TitleRole
from app.search.service import SearchService

DEBOUNCE_MS = 120
ROW_WIDTH = 560


def _row_html(title: str, date: str, snippet: str, selected: bool, color: str) -> str:
    """A hit's two lines; a match is marked yellow, and bold on a selected row (whose colours are the palette's)."""
    import html

    mark = "" if selected else "b { background-color: #ffe58a; color: #1a1a1a; }"
    meta = color if selected else "gray"
    return (
        f"<style>{mark}</style><div style='color:{color}'>"
        f"<div><span style='font-weight:600'>{html.escape(title)}</span> <span style='color:{meta}'>· {html.escape(date)}</span></div>"
        f"<div>{snippet}</div></div>"
    )


class HitDelegate(QStyledItemDelegate):
    """A hit in two lines: its conversation and date, then the snippet with the matches highlighted."""

    def _document(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)  # type: ignore[attr-defined]  # QStyleOptionViewItem's fields, not in the stubs
        selected = bool(option.state & QStyle.StateFlag.State_Selected)  # type: ignore[attr-defined]
        palette = option.palette  # type: ignore[attr-defined]
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        doc.setHtml(_row_html(index.data(TitleRole) or "", index.data(DateRole) or "", index.data(SnippetHtmlRole) or "", selected, palette.color(role).name()))
        doc.setTextWidth(max(option.rect.width(), 200))  # type: ignore[attr-defined]
        return doc

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""  # type: ignore[attr-defined]
        style = opt.widget.style() if opt.widget is not None else None  # type: ignore[attr-defined]
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)  # type: ignore[attr-defined]
        doc = self._document(option, index)
        painter.save()
        rect = option.rect  # type: ignore[attr-defined]
        painter.translate(rect.topLeft())
        doc.drawContents(painter, QRectF(0, 0, rect.width(), rect.height()))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        doc = self._document(option, index)
        return QSize(int(doc.idealWidth()), int(doc.size().height()) + 4)


class SearchDialog(QDialog):
    sig_open = Signal(str, int)  # conversation id, message id

    def __init__(self, service: SearchService, parent: QWidget | None = None):
        super().__init__(parent)
        self.service = service
        self.conversation_id: str | None = None
        self.setObjectName("searchDialog")
        self.resize(ROW_WIDTH + 40, 460)
        self.box = QLineEdit()
        self.box.setClearButtonEnabled(True)
        self.box.setAccessibleName(self.tr("Search"))
        self.results = SearchResultsModel(service, self)
        self.list = QListView()
        self.list.setModel(self.results)
        self.list.setItemDelegate(HitDelegate(self.list))
        self.list.setUniformItemSizes(False)
        self.list.setWordWrap(True)
        self.list.setAccessibleName(self.tr("Messages found"))
        self.status = QLabel()
        self.status.setObjectName("hint")
        layout = QVBoxLayout(self)
        layout.addWidget(self.box)
        layout.addWidget(self.status)
        layout.addWidget(self.list, 1)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self.search_now)
        self.box.textChanged.connect(lambda _text: self._debounce.start())
        self.box.installEventFilter(self)
        self.list.activated.connect(self._open_index)
        self.list.doubleClicked.connect(self._open_index)
        service.sig_results.connect(lambda _hits, _first: self._show_count())
        service.sig_failed.connect(lambda reason: self.status.setText(self.tr("The search failed: {reason}").format(reason=reason)))

    def start(self, conversation_id: str | None, conversation_title: str = "") -> None:
        """Open the box: across every conversation (None), or within `conversation_id`."""
        self.conversation_id = conversation_id
        if conversation_id is None:
            self.setWindowTitle(self.tr("Search all conversations"))
            self.box.setPlaceholderText(self.tr("Search every message of every conversation"))
        else:
            self.setWindowTitle(self.tr("Find in “{title}”").format(title=conversation_title))
            self.box.setPlaceholderText(self.tr("Search this conversation"))
        self.box.selectAll()
        self.open()
        self.box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if self.box.text():
            self.search_now()

    def search_now(self) -> None:
        self._debounce.stop()
        text = self.box.text()
        self.status.setText(self.tr("Searching…") if text.strip() else "")
        self.service.search(text, self.conversation_id)

    def _show_count(self) -> None:
        if not self.box.text().strip():
            self.status.setText("")
        elif self.results.rowCount() == 0:
            self.status.setText(self.tr("No message contains this"))
        else:
            shown = self.results.rowCount()
            more = "" if self.service.exhausted else "+"
            self.status.setText(self.tr("Found: {count}{more} (whole words first, then newest first)").format(count=shown, more=more))
            if self.list.currentIndex().row() < 0:
                self.list.setCurrentIndex(self.results.index(0))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Up and Down in the box move through the hits, Enter opens the chosen one: the hands stay on the keys."""
        if watched is self.box and isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            key = event.key()
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up, Qt.Key.Key_PageDown, Qt.Key.Key_PageUp):
                self.list.setFocus()
                self.list.keyPressEvent(event)
                self.box.setFocus()
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if self._debounce.isActive():
                    self.search_now()
                elif self.list.currentIndex().isValid():
                    self._open_index(self.list.currentIndex())
                return True
        return super().eventFilter(watched, event)

    def _open_index(self, index: QModelIndex | QPersistentModelIndex) -> None:
        if not index.isValid():
            return
        self.accept()
        self.sig_open.emit(str(index.data(ConversationIdRole)), int(index.data(MessageIdRole)))
