"""The conversation list as a Qt model over the store, and its proxy: newest first, filtered by title."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from app.storage.store import Conversation

ConversationRole = Qt.ItemDataRole.UserRole + 1
UpdatedAtRole = Qt.ItemDataRole.UserRole + 2
IdRole = Qt.ItemDataRole.UserRole + 3


class ConversationListModel(QAbstractListModel):
    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._items: list[Conversation] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        conv = self._items[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return conv.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tr("{title}\nlast active {time}").format(title=conv.title, time=time.strftime("%Y-%m-%d %H:%M", time.localtime(conv.updated_at)))
        if role == ConversationRole:
            return conv
        if role == UpdatedAtRole:
            return conv.updated_at
        if role == IdRole:
            return conv.id
        return None

    def set_conversations(self, conversations: list[Conversation]) -> None:
        self.beginResetModel()
        self._items = list(conversations)
        self.endResetModel()

    def row_of(self, conversation_id: str) -> int:
        for i, conv in enumerate(self._items):
            if conv.id == conversation_id:
                return i
        return -1

    def conversation(self, conversation_id: str) -> Conversation | None:
        row = self.row_of(conversation_id)
        return self._items[row] if row >= 0 else None

    def upsert(self, conv: Conversation) -> None:
        row = self.row_of(conv.id)
        if row < 0:
            self.beginInsertRows(QModelIndex(), len(self._items), len(self._items))
            self._items.append(conv)
            self.endInsertRows()
        else:
            self._items[row] = conv
            self.dataChanged.emit(self.index(row), self.index(row))

    def remove(self, conversation_id: str) -> None:
        row = self.row_of(conversation_id)
        if row >= 0:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._items[row]
            self.endRemoveRows()


class ConversationFilterModel(QSortFilterProxyModel):
    """Newest first, filtered by a case-insensitive piece of the title."""

    def __init__(self, source: ConversationListModel, parent: QObject | None = None):
        super().__init__(parent)
        self.setSourceModel(source)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterRole(Qt.ItemDataRole.DisplayRole)
        self.setSortRole(UpdatedAtRole)
        self.setDynamicSortFilter(True)
        self.sort(0, Qt.SortOrder.DescendingOrder)

    def set_filter_text(self, text: str) -> None:
        self.setFilterFixedString(text)
