"""The conversation store's SQLite settings (issue #27, "SQLite"): commits durable through a power cut,
the damage check reading exactly the file it names, wherever the data folder is, and the opening
(its quick_check reads the whole file) done off the window's thread.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.storage import store as st
from app.storage.startup import open_store_or_ask
from app.storage.reply_record import ReplyRecord
from app.storage.store import Store, open_or_set_aside, proven_damaged
from runtime.protocol import GenerationStats
from store_lock import LockHolder

# A folder name a URI would misread: %41 decodes to "A", "?" starts a query, "#" a fragment.
AWKWARD = "data%41?x#y"


def write_conversation(path: Path) -> None:
    store = Store(path)
    conv = store.create_conversation("Before the damage")
    for i in range(40):
        store.add_message(conv.id, "user" if i % 2 == 0 else "assistant", f"message {i} " + "x" * 200)
    store.close()


def damage_an_index(path: Path) -> None:
    """The conversations index's root page overwritten: quick_check fails, the messages stay readable."""
    db = sqlite3.connect(str(path))
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    (root,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'conversations_by_update'").fetchone()
    db.close()
    with open(path, "r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\xff" * 64)


def test_commits_are_synced_at_once(tmp_path):
    # FULL: each commit syncs the WAL, so a message the call returned for survives a power cut (NORMAL: until the next checkpoint).
    store = Store(tmp_path / "conversations.sqlite3")
    try:
        assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        store.close()


def test_the_damage_check_reads_the_file_it_names_in_a_folder_with_percent_question_mark_and_hash(tmp_path):
    folder = tmp_path / AWKWARD
    folder.mkdir()
    path = folder / "conversations.sqlite3"
    write_conversation(path)
    assert not proven_damaged(path)  # whole: not damaged
    damage_an_index(path)
    assert proven_damaged(path)
    # The check only reads: nothing created where a misread URI would point ("dataA"), nothing added beside the file.
    assert sorted(p.name for p in tmp_path.iterdir()) == [AWKWARD]
    assert {p.name for p in folder.iterdir()} <= {"conversations.sqlite3", "conversations.sqlite3-wal", "conversations.sqlite3-shm"}


def test_a_store_in_such_a_folder_opens_and_sets_a_damaged_file_aside(tmp_path):
    folder = tmp_path / AWKWARD
    folder.mkdir()
    path = folder / "conversations.sqlite3"
    write_conversation(path)
    damage_an_index(path)
    store, notice = open_or_set_aside(path)
    try:
        assert notice is not None and "damaged" in notice
        assert store.conversations() == []
    finally:
        store.close()
    assert any(".damaged-" in p.name for p in folder.iterdir())


def test_a_reply_streams_with_cheap_checkpoints_and_ends_with_a_synced_commit(tmp_path):
    store = Store(tmp_path / "conversations.sqlite3")
    try:
        conv = store.create_conversation("c")
        reply = store.add_message(conv.id, "assistant", "", state="streaming")
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        store.update_message(reply.id, content="Once upon")  # a streaming checkpoint
        checkpoint, statements[:] = list(statements), []
        store.update_message(reply.id, content="Once upon a time.", state="complete", record=ReplyRecord(GenerationStats(ttft_ms=1.0), "stop"))  # its end
        end = list(statements)
        store._db.set_trace_callback(None)
        assert checkpoint.index("PRAGMA synchronous=NORMAL") < checkpoint.index("COMMIT") < checkpoint.index("PRAGMA synchronous=FULL")
        assert "PRAGMA synchronous=NORMAL" not in end  # the end commits with FULL, syncing the checkpoints before it too
        assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2
        assert store.messages(conv.id)[0].content == "Once upon a time."
    finally:
        store.close()


def test_the_store_opens_on_a_worker_while_the_window_thread_keeps_running_its_events(qtbot, tmp_path, monkeypatch):
    """Another process holds the database's write lock; only an event on the window's thread releases it.

    Opened on the window's thread, the open would wait the whole busy timeout with no event run, then
    say "locked" (the dialog is answered Quit). Opened on a worker, the event runs, and the open goes on.
    """
    path = tmp_path / "conversations.sqlite3"
    write_conversation(path)
    monkeypatch.setattr(st, "BUSY_TIMEOUT_S", 30.0)  # the open waits this long for the lock: the event below ends the wait
    holder = LockHolder(path)
    ran: list[str] = []

    def release() -> None:
        ran.append("an event ran while the store opened")
        holder.release()

    def quit_a_dialog() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            next(b for b in box.buttons() if b.text().replace("&", "") == "Quit").click()

    QTimer.singleShot(0, release)
    dialogs = QTimer()
    dialogs.timeout.connect(quit_a_dialog)
    dialogs.start(50)
    try:
        opened = open_store_or_ask(path)
    finally:
        dialogs.stop()
        holder.release()
    assert opened is not None, "the open waited on the window's thread, and the lock was never released"
    store, notice = opened
    assert ran and notice is None
    assert len(store.messages(store.conversations()[0].id)) == 40  # the connection works on this thread
    store.close()
