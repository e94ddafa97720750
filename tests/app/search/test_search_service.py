"""The search thread: the newest search's hits are the ones shown, pages follow each other, and a database
that cannot be read is said (not raised on the GUI thread)."""

from __future__ import annotations

import threading

from app.search import service as search_service
from app.search.results_model import SearchResultsModel
from app.search.service import SearchService
from app.storage.store import Store
from waiting import qt_wait_until


def test_only_the_newest_search_is_shown_and_pages_follow_on(qapp, store_path, monkeypatch):
    store = Store(store_path)
    conv = store.create_conversation("Animals")
    for i in range(7):
        store.add_message(conv.id, "user", f"otter number {i}")
    store.add_message(conv.id, "user", "a lonely badger")
    store.close()
    gate = threading.Event()
    real = search_service.query.search

    def held(db, text, *args):
        if text == "otter":
            assert gate.wait(30)
        return real(db, text, *args)

    monkeypatch.setattr(search_service.query, "search", held)
    service = SearchService(store_path, page=3)
    model = SearchResultsModel(service)
    got: list[tuple[list, bool]] = []
    service.sig_results.connect(lambda hits, first: got.append((hits, first)))
    try:
        service.search("otter")  # held on the thread while a newer search comes
        service.search("badger")
        gate.set()
        qt_wait_until(lambda: not service.searching, 30, "the newest search answered")
        assert [h.snippet for h in model.hits] == ["a lonely \x02badger\x03"]
        assert all(hits[0].snippet.endswith("badger\x03") for hits, _first in got)  # the otter answer was dropped

        service.search("otter")
        qt_wait_until(lambda: model.rowCount() == 3, 30, "a first page of three")
        assert model.canFetchMore()
        while model.canFetchMore():
            rows = model.rowCount()
            model.fetchMore()
            qt_wait_until(lambda: not service.searching, 30, "the next page")
            assert model.rowCount() > rows or service.exhausted
        assert [h.snippet[-1] for h in model.hits] == [str(i) for i in range(6, -1, -1)]  # newest first, each once
    finally:
        service.close()


def test_a_database_that_cannot_be_read_is_said_not_raised(qapp, tmp_path):
    broken = tmp_path / "not-a-database.sqlite3"
    broken.write_bytes(b"this is not SQLite" * 100)
    service = SearchService(broken)
    failures: list[str] = []
    service.sig_failed.connect(failures.append)
    try:
        service.search("anything")
        qt_wait_until(lambda: failures, 30, "the failure said")
        assert "not a database" in failures[0] and not service.searching
    finally:
        service.close()
