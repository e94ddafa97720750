"""A large import writes in short transactions beside the window: the lock is free between them, what it wrote
shows only once it has all been written, and a failure or a killed importer leaves nothing behind."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app.importing.service import import_file
from app.search.query import search
from app.storage import pending_imports
from app.storage import store as st
from app.storage.store import Store
from chatgpt_exports import write_chatgpt_export

ROOT = Path(__file__).resolve().parents[3]


def pending_keys(path: Path) -> list[str]:
    with sqlite3.connect(str(path)) as db:
        return [k for (k,) in db.execute("SELECT key FROM app_state WHERE key LIKE 'import-pending:%'")]


def rows(path: Path, table: str) -> int:
    with sqlite3.connect(str(path)) as db:
        return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: S608 (a test's own table names)


@pytest.fixture
def one_conversation_a_transaction(monkeypatch):
    monkeypatch.setattr(st, "IMPORT_BATCH_S", 0.0)


def test_between_transactions_the_lock_is_free_and_nothing_of_the_import_shows(tmp_path, monkeypatch, one_conversation_a_transaction):
    export = write_chatgpt_export(tmp_path / "conversations.json", 3, 4)
    importer = Store(tmp_path / "c.sqlite3", beside_window=True)
    window = Store(tmp_path / "c.sqlite3")
    seen = []

    def at_the_pause(_seconds: float) -> None:
        with sqlite3.connect(str(window.path), timeout=0) as db:  # no wait at all: a held lock raises "locked"
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
        window.set_state("written by the window", "during the import")
        written = rows(window.path, "conversations")
        seen.append((written, window.conversations(), search(window._db, "Lorem ipsum").hits))

    monkeypatch.setattr(st.time, "sleep", at_the_pause)
    summary = import_file(importer, export)
    assert [written for written, _, _ in seen] == [1, 2], "one conversation a transaction, a pause after each but the last"
    assert all(listed == [] and hits == [] for _, listed, hits in seen), "written, but neither listed nor found before the end"
    assert len(summary.added) == 3 and len(window.conversations()) == 3 and search(window._db, "Lorem ipsum").hits
    assert window.get_state("written by the window") == "during the import" and pending_keys(window.path) == []
    importer.close()
    window.close()


def test_an_import_that_fails_in_a_later_transaction_takes_the_earlier_ones_back(tmp_path, one_conversation_a_transaction):
    export = write_chatgpt_export(tmp_path / "conversations.json", 3, 4)
    store = Store(tmp_path / "c.sqlite3")
    with sqlite3.connect(str(store.path)) as db:  # the third conversation's insert is refused by the database itself
        db.execute("CREATE TRIGGER no_third BEFORE INSERT ON conversations WHEN NEW.title = 'Conversation 2' BEGIN SELECT RAISE(ABORT, 'refused'); END")
    with pytest.raises(st.StoreUnavailable, match="refused"):
        import_file(store, export)
    assert store.conversations() == [] and rows(store.path, "conversations") == 0 and rows(store.path, "messages") == 0
    assert pending_keys(store.path) == []
    store.close()


DIES_AT_THE_FIRST_PAUSE = """
import os, sys
sys.path[:0] = [sys.argv[1], os.path.join(sys.argv[1], "tests")]
from app.importing.service import import_file
from app.storage import store as st
st.IMPORT_BATCH_S = 0.0
st.time.sleep = lambda _s: os._exit(9)  # killed after its first transaction
import_file(st.Store(sys.argv[2], beside_window=True), sys.argv[3])
"""


def test_an_import_whose_process_died_midway_is_undone_when_the_store_next_opens(tmp_path):
    export = write_chatgpt_export(tmp_path / "conversations.json", 3, 4)
    path = tmp_path / "c.sqlite3"
    Store(path).close()
    died = subprocess.run([sys.executable, "-c", DIES_AT_THE_FIRST_PAUSE, str(ROOT), str(path), str(export)], timeout=60)
    assert died.returncode == 9
    assert rows(path, "conversations") == 1 and len(pending_keys(path)) == 1, "its first transaction is on disk, unfinished"
    store = Store(path)
    assert rows(path, "conversations") == 0 and rows(path, "messages") == 0 and pending_keys(path) == []
    assert len(import_file(store, export).added) == 3, "and the same file imports whole afterwards"
    store.close()


def test_an_import_still_running_in_another_process_is_left_alone(tmp_path):
    path = tmp_path / "c.sqlite3"
    Store(path).close()
    with sqlite3.connect(str(path), isolation_level=None) as db:  # this process, alive, as the importer
        key = pending_imports.begin(db)
    window = Store(path)
    assert pending_keys(path) == [key]
    window.close()


def test_a_stop_asked_midway_takes_back_what_was_written_in_short_transactions_too(tmp_path, monkeypatch, one_conversation_a_transaction):
    export = write_chatgpt_export(tmp_path / "conversations.json", 4, 4)
    store = Store(tmp_path / "c.sqlite3", beside_window=True)
    on_disk_at_each_pause = []

    def at_the_pause(_seconds: float) -> None:
        with sqlite3.connect(str(store.path), timeout=0) as db:  # the lock is free between the undo's transactions too
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
        on_disk_at_each_pause.append(rows(store.path, "conversations"))

    monkeypatch.setattr(st.time, "sleep", at_the_pause)
    progress: list[tuple[int, int]] = []
    with pytest.raises(st.WriteStopped):
        import_file(store, export, lambda done, total: progress.append((done, total)), lambda: len(progress) >= 3)
    assert progress == [(0, 4), (1, 4), (2, 4)]
    assert on_disk_at_each_pause == [1, 2, 1], "two written, a transaction each; then taken back, a transaction each"
    assert rows(store.path, "conversations") == 0 and rows(store.path, "messages") == 0 and pending_keys(store.path) == []
    store.close()


def test_a_pending_import_key_that_is_not_json_is_dropped_at_the_next_open_and_the_store_opens(tmp_path):
    path = tmp_path / "c.sqlite3"
    Store(path).close()
    with sqlite3.connect(str(path), isolation_level=None) as db:
        db.execute("INSERT INTO app_state (key, value) VALUES ('import-pending:damaged', '{not json')")
        db.execute("INSERT INTO app_state (key, value) VALUES ('import-pending:odd', '{\"pid\": 1, \"conversations\": [7, null]}')")
    store = Store(path)
    assert pending_keys(path) == [] and store.conversations() == []
    store.close()
