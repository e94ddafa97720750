"""The conversation list as a Qt model over the store, newest first, and its proxy, filtered by title.

The list model keeps the order itself (a bisect on each change) rather than letting the proxy sort: a proxy's
sort asks the Python `data()` for both sides of each comparison, about a second for 20,000 conversations."""

from __future__ import annotations

import bisect
import time
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from app.storage.store import Conversation

ConversationRole = Qt.ItemDataRole.UserRole + 1
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
        if role == IdRole:
            return conv.id
        return None

    def set_conversations(self, conversations: list[Conversation]) -> None:
        self.beginResetModel()
        self._items = sorted(conversations, key=_newest_first)
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
        """Adds or updates `conv` at its place by last activity (among equals, before them: it was touched last)."""
        row = self.row_of(conv.id)
        if row < 0:
            place = bisect.bisect_left(self._items, _newest_first(conv), key=_newest_first)
            self.beginInsertRows(QModelIndex(), place, place)
            self._items.insert(place, conv)
            self.endInsertRows()
            return
        others = self._items[:row] + self._items[row + 1 :]
        place = bisect.bisect_left(others, _newest_first(conv), key=_newest_first)
        if place != row:
            self.beginMoveRows(QModelIndex(), row, row, QModelIndex(), place if place < row else place + 1)
            self._items = others
            self._items.insert(place, conv)
            self.endMoveRows()
        else:
            self._items[row] = conv
        self.dataChanged.emit(self.index(place), self.index(place))

    def remove(self, conversation_id: str) -> None:
        row = self.row_of(conversation_id)
        if row >= 0:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._items[row]
            self.endRemoveRows()


class ConversationFilterModel(QSortFilterProxyModel):
    """The list's own order (newest first), filtered by a case-insensitive piece of the title."""

    def __init__(self, source: ConversationListModel, parent: QObject | None = None):
        super().__init__(parent)
        self.setSourceModel(source)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterRole(Qt.ItemDataRole.DisplayRole)
        self.setDynamicSortFilter(True)  # a renamed conversation is filtered again

    def set_filter_text(self, text: str) -> None:
        self.setFilterFixedString(text)


def _newest_first(conv: Conversation) -> float:
    return -conv.updated_at
