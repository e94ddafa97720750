"""The real window over the real runtime when the database refuses work: told, retried, nothing lost."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.chat.controller import ConversationSettings
from app.runtime_link import ConnectionState
from app.storage import store as st
from app.storage.startup import open_store_or_ask
from mounts import fill, tmpfs
from store_lock import LockHolder
from test_store_faults import files_of, readable, write_conversation
from window_helpers import open_window, wait_reply


def answer_dialog(button_text: str, seen: list, before=None) -> QTimer:
    """Click `button_text` on the next modal dialog (recording its text in `seen`), after calling before()."""
    timer = QTimer()

    def look() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            return
        timer.stop()
        seen.append(box.text())
        if before is not None:
            before()
        button = next(b for b in box.buttons() if b.text().replace("&", "") == button_text)
        button.click()

    timer.timeout.connect(look)
    timer.start(50)
    return timer


def test_a_locked_database_at_start_says_so_and_opens_on_retry_once_released(qtbot, tmp_path):
    path = tmp_path / "conversations.sqlite3"
    written = write_conversation(path)
    holder = LockHolder(path)
    seen: list[str] = []
    timer = answer_dialog("Retry", seen, before=holder.release)
    opened = open_store_or_ask(path)
    timer.stop()
    assert opened is not None
    store, notice = opened
    assert notice is None and len(seen) == 1
    assert "in use by another program" in seen[0] and "retry" in seen[0]
    assert {m.id: m.content for m in store.messages(store.conversations()[0].id)} == written
    store.close()


def test_quitting_at_the_locked_database_dialog_touches_nothing(qtbot, tmp_path):
    path = tmp_path / "conversations.sqlite3"
    written = write_conversation(path)
    holder = LockHolder(path)
    try:
        before = files_of(tmp_path)
        seen: list[str] = []
        timer = answer_dialog("Quit", seen)
        assert open_store_or_ask(path) is None
        timer.stop()
        assert files_of(tmp_path) == before
    finally:
        holder.release()
    assert readable(path) == written


def test_a_database_from_a_newer_lokal_gets_a_dialog_naming_both_versions_and_stays_untouched(qtbot, tmp_path):
    path = tmp_path / "conversations.sqlite3"
    written = write_conversation(path)
    db = sqlite3.connect(str(path))
    db.execute(f"PRAGMA user_version = {st.SCHEMA_VERSION + 1}")
    db.close()
    before = files_of(tmp_path)
    seen: list[str] = []
    timer = answer_dialog("OK", seen)
    assert open_store_or_ask(path) is None
    timer.stop()
    assert f"schema {st.SCHEMA_VERSION + 1}" in seen[0] and f"schema {st.SCHEMA_VERSION} at most" in seen[0]
    assert files_of(tmp_path) == before
    assert readable(path) == written


def send(qtbot, window, text: str) -> None:
    window.composer.edit.setFocus()
    window.composer.edit.setPlainText(text)
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)


def test_a_message_sent_to_a_full_disk_stays_in_the_composer_until_it_can_be_saved(qtbot, tmp_path, starter_model):
    with tmpfs(tmp_path / "data", "2m") as data:
        path = data / "conversations.sqlite3"
        window = open_window(qtbot, path, starter_model)
        try:
            window.chat.new_conversation()
            filler = fill(data)
            send(qtbot, window, "Hello there, small model")
            assert window.composer.text() == "Hello there, small model"  # not sent, not lost
            assert not window.chat.generating
            assert window.banner.isVisible() and window.banner_retry.isVisible()
            assert "disk" in window.banner_text.text() and "full" in window.banner_text.text()
            filler.unlink()
            send(qtbot, window, window.composer.text())
            assert window.composer.text() == "" and window.chat.generating
            wait_reply(qtbot, window)
            rows = readable(path)
            assert "Hello there, small model" in rows.values()
        finally:
            window.shutdown()


def test_a_disk_that_fills_mid_reply_keeps_the_reply_and_saves_it_once_space_is_back(qtbot, tmp_path, starter_model):
    settings = ConversationSettings(temperature=0.0, max_tokens=48, n_ctx=2048, seed=1)
    with tmpfs(tmp_path / "data", "2m") as data:
        path = data / "conversations.sqlite3"
        window = open_window(qtbot, path, starter_model, settings=settings)
        try:
            written = dict(readable(path))
            fillers = []
            # As soon as the reply starts, something else fills the disk: every checkpoint and the reply's end fail.
            window.chat.sig_generating_changed.connect(lambda on: fillers.append(fill(data)) if on and not fillers else None)
            send(qtbot, window, "Tell me about the sea.")
            wait_reply(qtbot, window)
            reply = window.chat.messages.messages[-1]
            assert reply.role == "assistant" and reply.state == st.COMPLETE and reply.content
            qtbot.waitUntil(lambda: window.banner_retry.isVisible(), timeout=10_000)
            assert window.store.deferred_writes >= 1
            assert readable(path).get(reply.id, "") != reply.content  # only in memory so far
            fillers[0].unlink()
            qtbot.mouseClick(window.banner_retry, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: not window.banner.isVisible(), timeout=5_000)
            on_disk = readable(path)
            assert on_disk[reply.id] == reply.content
            assert {k: on_disk[k] for k in written} == written
        finally:
            window.shutdown()


def button(box: QMessageBox, text: str):
    return next(b for b in box.buttons() if b.text().replace("&", "") == text)


def window_with_a_reply_only_in_memory(qtbot, data, starter_model):
    """A window whose store keeps a finished reply in memory only: the disk filled before it could be written."""
    path = data / "conversations.sqlite3"
    window = open_window(qtbot, path, starter_model, load=False)
    conv = window.chat.new_conversation()
    reply = window.store.add_message(conv.id, "assistant", "", state=st.STREAMING)
    filler = fill(data)
    window.store.update_message(reply.id, content="A reply worth keeping.", state=st.COMPLETE)
    assert window.store.deferred_writes == 1
    return window, path, reply, filler


def test_closing_with_unsaved_replies_asks_without_blocking_and_retry_saves_them_then_closes(qtbot, tmp_path, starter_model):
    with tmpfs(tmp_path / "data", "2m") as data:
        window, path, reply, filler = window_with_a_reply_only_in_memory(qtbot, data, starter_model)
        try:
            asked: list[QMessageBox] = []
            window.unsaved.sig_asked.connect(asked.append)
            assert window.close() is False  # returns at once: the question is open, no nested event loop runs
            assert len(asked) == 1 and window.unsaved.question is asked[0] and asked[0].isVisible()
            assert asked[0].text().startswith("1 message could not be saved yet.") and "full" in asked[0].text()
            assert window.isVisible() and not window.is_shut_down
            assert window.close() is False and len(asked) == 1  # a second close while it is asked: the same question

            button(asked[0], "Retry").click()  # the disk is still full: asked again
            qtbot.waitUntil(lambda: len(asked) == 2 and asked[1].isVisible(), timeout=5_000)
            assert window.isVisible() and not window.is_shut_down

            button(asked[1], "Cancel").click()  # the window stays, the reply still kept
            assert window.unsaved.question is None and window.isVisible() and not window.is_shut_down
            assert window.store.deferred_writes == 1

            assert window.close() is False
            qtbot.waitUntil(lambda: len(asked) == 3 and asked[2].isVisible(), timeout=5_000)
            filler.unlink()
            closed = []
            window.sig_closed.connect(lambda: closed.append(True))
            button(asked[2], "Retry").click()
            qtbot.waitUntil(lambda: closed == [True], timeout=10_000)
            assert window.is_shut_down and not window.isVisible()
            assert readable(path)[reply.id] == "A reply worth keeping."
        finally:
            window.shutdown()


def test_quit_without_saving_closes_even_while_the_disk_is_still_full(qtbot, tmp_path, starter_model):
    with tmpfs(tmp_path / "data", "2m") as data:
        window, path, reply, filler = window_with_a_reply_only_in_memory(qtbot, data, starter_model)
        try:
            asked: list[QMessageBox] = []
            window.unsaved.sig_asked.connect(asked.append)
            closed = []
            window.sig_closed.connect(lambda: closed.append(True))
            assert window.close() is False
            button(asked[0], "Quit without saving").click()
            qtbot.waitUntil(lambda: closed == [True], timeout=10_000)
            assert window.is_shut_down and not window.isVisible() and window.link.state == ConnectionState.STOPPED
            assert readable(path).get(reply.id) == ""  # what the disk refused is gone, as the user chose
        finally:
            window.shutdown()
