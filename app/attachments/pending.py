"""The attachments of the message being written, as a list model: the composer's chips render it.

An attachment is listed as soon as it is chosen (reading…), and gets its figures when the runtime's
`attachment.add` answers: its size in tokens for the loaded model, whether it fits whole or will be
searched. The message can be sent once every one has answered.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from app.storage.attachments import StoredAttachment

AttachmentRole = Qt.ItemDataRole.UserRole + 40  # the Pending item


@dataclass
class Pending:
    key: int  # this attachment's own number while it is pending (the same file may be attached twice)
    name: str
    kind: str  # "document" or "image"
    attachment: StoredAttachment | None = None  # None while the runtime reads it
    searchable_part: float | None = None  # while a large document's parts are embedded for search: the share done

    @property
    def ready(self) -> bool:
        return self.attachment is not None


class PendingAttachments(QAbstractListModel):
    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._items: list[Pending] = []
        self._next_key = 0

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return item.name
        if role == AttachmentRole:
            return item
        return None

    @property
    def items(self) -> list[Pending]:
        return list(self._items)

    def add(self, name: str, kind: str) -> int:
        """A new pending attachment; its key."""
        key = self._next_key
        self._next_key += 1
        self.beginInsertRows(QModelIndex(), len(self._items), len(self._items))
        self._items.append(Pending(key, name, kind))
        self.endInsertRows()
        return key

    def row_of(self, key: int) -> int:
        return next((row for row, item in enumerate(self._items) if item.key == key), -1)

    def resolve(self, key: int, attachment: StoredAttachment) -> bool:
        """The runtime answered; False if the user removed it meanwhile."""
        row = self.row_of(key)
        if row < 0:
            return False
        self._items[row] = dataclasses.replace(self._items[row], attachment=attachment, name=attachment.name or self._items[row].name)
        self.dataChanged.emit(self.index(row), self.index(row))
        return True

    def set_progress(self, key: int, share: float) -> None:
        """How much of a large document the runtime has made searchable so far (attachment.progress)."""
        row = self.row_of(key)
        if row >= 0 and self._items[row].attachment is None:
            self._items[row] = dataclasses.replace(self._items[row], searchable_part=share)
            self.dataChanged.emit(self.index(row), self.index(row))

    def remove(self, key: int) -> None:
        row = self.row_of(key)
        if row >= 0:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._items[row]
            self.endRemoveRows()

    def clear(self) -> None:
        if self._items:
            self.beginResetModel()
            self._items = []
            self.endResetModel()

    @property
    def reading(self) -> bool:
        return any(not item.ready for item in self._items)

    def ready(self) -> list[StoredAttachment]:
        return [item.attachment for item in self._items if item.attachment is not None]
