"""The conversation list: new chat, a title filter, the list itself (newest first) and its context menu.

A long title is cut with an ellipsis at the list's width (the tooltip holds it whole): the list never
scrolls sideways, however narrow the sidebar is made.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QLineEdit, QListView, QMenu, QPushButton, QStyledItemDelegate, QStyleOptionViewItem, QVBoxLayout, QWidget,
)

from app.chat.conversation_model import ConversationFilterModel, IdRole
from app.ui import icons


class TitleDelegate(QStyledItemDelegate):
    """Rows as wide as the list, never wider: the view then has nothing to scroll sideways, and the
    style elides each title to the row (QListView sizes rows by their text otherwise)."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        hint = super().sizeHint(option, index)
        return QSize(1, hint.height())


class Sidebar(QWidget):
    sig_open = Signal(str)
    sig_new = Signal()
    sig_rename = Signal(str)
    sig_delete = Signal(str)
    sig_export = Signal(str, str)  # id, "md" | "json"

    def __init__(self, proxy: ConversationFilterModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.proxy = proxy
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 12, 10, 10)
        layout.setSpacing(8)
        self.new_button = QPushButton(icons.icon("new-chat"), self.tr("New chat"))
        self.new_button.setToolTip(self.tr("New chat (Ctrl+N)"))
        self.new_button.setAccessibleName(self.tr("New chat"))
        self.new_button.setAccessibleDescription(self.tr("Start a new conversation"))
        self.new_button.clicked.connect(self.sig_new)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText(self.tr("Filter by title"))
        self.filter.setClearButtonEnabled(True)
        self.filter.setAccessibleName(self.tr("Filter conversations"))
        self.filter.setAccessibleDescription(self.tr("Show only the conversations whose title contains this text"))
        self.filter.addAction(icons.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.filter.textChanged.connect(proxy.set_filter_text)
        self.list = QListView()
        self.list.setModel(proxy)
        self.list.setAccessibleName(self.tr("Conversations"))
        self.list.setAccessibleDescription(self.tr("Newest first. Enter opens one; the context menu key renames, exports or deletes it"))
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._on_context_menu)
        self.list.clicked.connect(self._on_clicked)
        self.list.activated.connect(self._on_clicked)
        self.list.setItemDelegate(TitleDelegate(self.list))
        # Every row is one elided line: the view sizes the first and lays the rest out alike, instead of asking
        # the delegate (Python) for each of thousands of rows whenever the list changes.
        self.list.setUniformItemSizes(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setWordWrap(False)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        layout.addWidget(self.new_button)
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        self.setMinimumWidth(200)

    def select(self, conversation_id: str | None) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(IdRole) == conversation_id:
                self.list.setCurrentIndex(index)
                return
        self.list.clearSelection()

    def _on_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.sig_open.emit(index.data(IdRole))

    def _on_context_menu(self, pos: QPoint) -> None:
        index = self.list.indexAt(pos)
        if not index.isValid():
            return
        conversation_id = index.data(IdRole)
        menu = QMenu(self)
        menu.addAction(self.tr("&Rename…"), lambda: self.sig_rename.emit(conversation_id))
        menu.addAction(icons.icon("export"), self.tr("Export as &Markdown…"), lambda: self.sig_export.emit(conversation_id, "md"))
        menu.addAction(icons.icon("export"), self.tr("Export as &JSON…"), lambda: self.sig_export.emit(conversation_id, "json"))
        menu.addSeparator()
        menu.addAction(icons.icon("delete"), self.tr("&Delete"), lambda: self.sig_delete.emit(conversation_id))
        menu.exec(self.list.viewport().mapToGlobal(pos))
