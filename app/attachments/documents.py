"""The Documents list: every document attached so far, as a list model, for reuse in a later conversation.

A document is stored in the runtime by its sha256 (runtime/documents), with its text extracted and,
when it was too large to fit, its chunks embedded. Attaching it again from this list sends only its id:
nothing is read, extracted or embedded again.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from app.attachments import words
from app.storage.attachments import StoredAttachment
from app.storage.store import Store

DocumentRole = Qt.ItemDataRole.UserRole + 41


class DocumentsModel(QAbstractListModel):
    def __init__(self, store: Store, parent: QObject | None = None):
        super().__init__(parent)
        self.store = store
        self._items: list[StoredAttachment] = []

    def refresh(self) -> None:
        """Read the list again (StoreUnavailable if the database refuses: the caller says so)."""
        items = self.store.documents()
        self.beginResetModel()
        self._items = items
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return words.chip_label(item.name, item)
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleDescriptionRole):
            return words.chip_detail(item)
        if role == DocumentRole:
            return item
        return None

    def document(self, row: int) -> StoredAttachment:
        return self._items[row]
