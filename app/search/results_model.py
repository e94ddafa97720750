"""The search's hits as a list model: the conversation's title, the snippet with its matches highlighted, the date.

It fills from a SearchService: a new search replaces the rows, a further page appends, and the view asks for
that page by scrolling to the end (canFetchMore / fetchMore), so no search reads more than a page at once.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QDateTime, QLocale, QModelIndex, QObject, QPersistentModelIndex, Qt

from app.search.query import MARK_END, MARK_START, Hit, highlighted_html
from app.search.service import SearchService

TitleRole = Qt.ItemDataRole.UserRole + 1
SnippetHtmlRole = Qt.ItemDataRole.UserRole + 2  # the snippet as HTML, its matches in <b>
DateRole = Qt.ItemDataRole.UserRole + 3  # the message's date, in the window's language
MessageIdRole = Qt.ItemDataRole.UserRole + 4
ConversationIdRole = Qt.ItemDataRole.UserRole + 5
HitRole = Qt.ItemDataRole.UserRole + 6


class SearchResultsModel(QAbstractListModel):
    def __init__(self, service: SearchService, parent: QObject | None = None):
        super().__init__(parent)
        self.service = service
        self._hits: list[Hit] = []
        service.sig_results.connect(self._on_results)

    @property
    def hits(self) -> list[Hit]:
        return self._hits

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._hits)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._hits):
            return None
        hit = self._hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:  # what a screen reader says: plain text, no markers
            plain = hit.snippet.replace(MARK_START, "").replace(MARK_END, "")
            return f"{hit.title} — {plain} — {self.date(hit)}"
        if role == TitleRole:
            return hit.title
        if role == SnippetHtmlRole:
            return highlighted_html(hit.snippet)
        if role == DateRole:
            return self.date(hit)
        if role == MessageIdRole:
            return hit.message_id
        if role == ConversationIdRole:
            return hit.conversation_id
        if role == HitRole:
            return hit
        return None

    @staticmethod
    def date(hit: Hit) -> str:
        when = QDateTime.fromMSecsSinceEpoch(int(hit.created_at * 1000))
        return QLocale().toString(when, QLocale.FormatType.ShortFormat)

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> bool:
        return not parent.isValid() and bool(self._hits) and not self.service.exhausted

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> None:
        if not parent.isValid():
            self.service.more()

    def _on_results(self, hits: list[Hit], first: bool) -> None:
        if first:
            self.beginResetModel()
            self._hits = list(hits)
            self.endResetModel()
        elif hits:
            self.beginInsertRows(QModelIndex(), len(self._hits), len(self._hits) + len(hits) - 1)
            self._hits.extend(hits)
            self.endInsertRows()
