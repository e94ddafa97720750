"""One conversation's messages as a Qt list model; the chat view renders it."""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from app.storage.store import Message

MessageRole = Qt.ItemDataRole.UserRole + 10
ContentRole = Qt.ItemDataRole.UserRole + 11
StateRole = Qt.ItemDataRole.UserRole + 12
SpeakerRole = Qt.ItemDataRole.UserRole + 13
RecordRole = Qt.ItemDataRole.UserRole + 14  # the reply's ReplyRecord (figures, finish reason, error)
ReasoningRole = Qt.ItemDataRole.UserRole + 15  # a thinking model's reasoning, apart from the answer (ContentRole)


class MessageListModel(QAbstractListModel):
    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._items: list[Message] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        msg = self._items[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, ContentRole):
            return msg.content
        if role == MessageRole:
            return msg
        if role == StateRole:
            return msg.state
        if role == SpeakerRole:
            return msg.role
        if role == RecordRole:
            return msg.record
        if role == ReasoningRole:
            return msg.reasoning
        return None

    @property
    def messages(self) -> list[Message]:
        return list(self._items)

    def message(self, row: int) -> Message:
        return self._items[row]

    def set_messages(self, messages: list[Message]) -> None:
        self.beginResetModel()
        self._items = [dataclasses.replace(m) for m in messages]
        self.endResetModel()

    def has_earlier(self) -> bool:
        """Older messages of the conversation are not in the model (a long one opens with its newest)."""
        return bool(self._items) and self._items[0].depth > 0

    def prepend(self, messages: list[Message]) -> None:
        """Older messages, shown above the others (a long conversation, read a part at a time)."""
        if messages:
            self.beginInsertRows(QModelIndex(), 0, len(messages) - 1)
            self._items[:0] = [dataclasses.replace(m) for m in messages]
            self.endInsertRows()

    def append(self, message: Message) -> int:
        row = len(self._items)
        self.beginInsertRows(QModelIndex(), row, row)
        self._items.append(dataclasses.replace(message))
        self.endInsertRows()
        return row

    def append_text(self, row: int, text: str) -> None:
        self._items[row].content += text
        self.dataChanged.emit(self.index(row), self.index(row), [ContentRole])

    def append_reasoning(self, row: int, text: str) -> None:
        self._items[row].reasoning += text
        self.dataChanged.emit(self.index(row), self.index(row), [ReasoningRole])

    def update(self, row: int, **fields: Any) -> None:
        msg = self._items[row]
        for name, value in fields.items():
            setattr(msg, name, value)
        self.dataChanged.emit(self.index(row), self.index(row))

    def truncate(self, row: int) -> None:
        """Drop `row` and every message after it."""
        if row < len(self._items):
            self.beginRemoveRows(QModelIndex(), row, len(self._items) - 1)
            del self._items[row:]
            self.endRemoveRows()

    def replace_from(self, row: int, messages: list[Message]) -> None:
        """Rows from `row` on become `messages` (another branch of the conversation is shown below `row`)."""
        self.truncate(row)
        if messages:
            first = len(self._items)
            self.beginInsertRows(QModelIndex(), first, first + len(messages) - 1)
            self._items += [dataclasses.replace(m) for m in messages]
            self.endInsertRows()

    def row_of_id(self, message_id: int) -> int:
        for i, msg in enumerate(self._items):
            if msg.id == message_id:
                return i
        return -1
