"""SearchService: searches run on a thread of their own, so typing never waits on the database.

The worker thread has its own read-only connection to the store's file (WAL lets it read while the window
writes a streaming reply). Each search carries a number; a new one interrupts the one still running
(sqlite3's interrupt() is safe from another thread), and an answer whose number is not the newest is
dropped, so what the list shows always belongs to what is in the box now. The thread is a daemon fed by a
queue (not a QThread): a window closed without close() leaves nothing that could abort the process.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal, SignalInstance

from app.search import query
from app.storage.store import BUSY_TIMEOUT_S, read_only_uri

log = logging.getLogger("lokal.search")


@dataclass(frozen=True)
class _Request:
    number: int
    text: str
    conversation_id: str | None
    cursor: query.Cursor | None
    limit: int


class _Worker:
    """The search thread: one search at a time, in the order asked; each answer goes to `answer`."""

    def __init__(self, path: Path, answer: SignalInstance):
        self.path = path
        self.answer = answer
        self.requests: queue.Queue[_Request | None] = queue.Queue()
        self.db: sqlite3.Connection | None = None
        self.thread = threading.Thread(target=self._loop, name="search", daemon=True)
        self.thread.start()

    def _answer(self, number: int, page: query.Page | None, error: str) -> None:
        try:
            self.answer.emit(number, page, error)
        except RuntimeError:
            pass  # the window (and its service) went away meanwhile: nobody waits for this answer

    def _loop(self) -> None:
        while True:
            request = self.requests.get()
            if request is None:
                break
            if not self.requests.empty():
                continue  # a newer one waits behind it: this one is out of date already
            self._run(request)
        if self.db is not None:
            self.db.close()

    def _run(self, request: _Request) -> None:
        try:
            if self.db is None:
                self.db = sqlite3.connect(read_only_uri(self.path), uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            page = query.search(self.db, request.text, request.conversation_id, request.cursor, request.limit)
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.OperationalError) and "interrupted" in str(exc):
                return  # a newer search took its place
            log.warning("search %r failed: %s", request.text, exc)
            self._answer(request.number, None, str(exc))
            return
        self._answer(request.number, page, "")


class SearchService(QObject):
    """search(text, conversation_id) -> sig_results(hits, first_page); more() asks for the next page."""

    sig_results = Signal(object, bool)  # list[Hit], True for a new search's first page (False: a further page)
    sig_failed = Signal(str)  # the database could not be searched: why
    _sig_done = Signal(int, object, str)  # from the search thread: search number, Page (None on an error), error ("" when none)

    def __init__(self, store_path: Path, parent: QObject | None = None, page: int = query.PAGE):
        super().__init__(parent)
        self.page = page
        self.text = ""
        self.conversation_id: str | None = None
        self.searching = False
        self.exhausted = True  # the last page came back short: there is no more
        self._number = 0
        self._cursor: query.Cursor | None = None  # where the next page starts (None: a new search's first page)
        self._sig_done.connect(self._on_done)  # emitted on the search thread: queued to this object's (the GUI) thread
        self._worker = _Worker(Path(store_path), self._sig_done)

    def search(self, text: str, conversation_id: str | None = None) -> None:
        self.text, self.conversation_id = text, conversation_id
        self._cursor = None
        self.exhausted = query.fts_query(text, prefix_last=False) is None
        self._start()

    def more(self) -> bool:
        """Ask for the next page; False when there is none, or one is on its way."""
        if self.exhausted or self.searching:
            return False
        self._start()
        return True

    def _start(self) -> None:
        self._number += 1
        db = self._worker.db
        if self.searching and db is not None:
            db.interrupt()  # the running one is out of date
        self.searching = True
        self._worker.requests.put(_Request(self._number, self.text, self.conversation_id, self._cursor, self.page))

    def _on_done(self, number: int, page: query.Page | None, error: str) -> None:
        if number != self._number:
            return
        self.searching = False
        if page is None:
            self.exhausted = True
            self.sig_failed.emit(error)
            return
        first = self._cursor is None
        self.exhausted = page.next is None
        self._cursor = page.next
        self.sig_results.emit(page.hits, first)

    def close(self) -> None:
        """End the search thread (the window closes); safe to call twice."""
        db = self._worker.db
        if db is not None:
            db.interrupt()
        self._worker.requests.put(None)
