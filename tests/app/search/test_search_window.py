"""Search in the real window: Ctrl+K across conversations, Ctrl+F within one, opening a hit, and a window
that keeps working while a search runs, even with a reply streaming."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence

from app.chat.controller import ConversationSettings
from app.chat.history import SHOWN_MESSAGES
from app.search import service as search_service
from app.search.results_model import SnippetHtmlRole, TitleRole
from app.storage.store import Store
from waiting import qt_wait_until
from window_helpers import open_window, wait_reply

pytestmark = pytest.mark.slow


def _seed(store_path) -> tuple[str, str, int]:
    """Two conversations; the word is in an old message of the long one, far above what it opens with."""
    store = Store(store_path)
    short = store.create_conversation("Short chat")
    store.add_message(short.id, "user", "Nothing to see here")
    long = store.create_conversation("Long chat")
    store.close()
    with sqlite3.connect(str(store_path)) as db:
        db.executemany(
            "INSERT INTO messages (conversation_id, position, role, content, state, created_at) VALUES (?, ?, ?, ?, 'complete', 1)",
            ((long.id, i, "user" if i % 2 == 0 else "assistant", "The capybara is the largest rodent." if i == 3 else f"Message {i}.") for i in range(3 * SHOWN_MESSAGES)),
        )
        (message_id,) = db.execute("SELECT id FROM messages WHERE conversation_id = ? AND position = 3", (long.id,)).fetchone()
    db.close()
    return short.id, long.id, message_id


def _shortcut(window, sequence: str):
    return next(a for menu in window.menus.values() for a in menu.actions() if a.shortcut() == QKeySequence(sequence))


def test_ctrl_k_finds_a_word_in_another_conversation_and_opens_it_at_the_message(qtbot, store_path, starter_model):
    short_id, long_id, message_id = _seed(store_path)
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        window.chat.open(short_id)
        _shortcut(window, "Ctrl+K").trigger()
        dialog = window.features["search"].dialog
        assert dialog is not None and dialog.isVisible() and dialog.conversation_id is None
        qtbot.keyClicks(dialog.box, "capyb")  # typed, not yet a whole word: a prefix
        qt_wait_until(lambda: dialog.results.rowCount() == 1, 30, "the hit listed")
        index = dialog.results.index(0)
        assert index.data(TitleRole) == "Long chat"
        assert "<b>capybara</b>" in index.data(SnippetHtmlRole)
        assert "1" in dialog.status.text()

        qtbot.keyClick(dialog.box, Qt.Key.Key_Return)  # Enter opens the chosen hit
        assert not dialog.isVisible()
        assert window.chat.current is not None and window.chat.current.id == long_id
        row = window.chat.messages.row_of_id(message_id)
        assert row >= 0  # older messages were loaded until it was there
        qt_wait_until(lambda: window.chat_view.revealed is not None and window.chat_view.revealed.message.id == message_id, 30, "the view scrolled to the message")
        qt_wait_until(lambda: not window.chat_view.revealed.visibleRegion().isEmpty(), 30, "the message on screen")
    finally:
        window.shutdown()


def test_ctrl_f_searches_only_the_conversation_on_screen(qtbot, store_path, starter_model):
    short_id, long_id, _message_id = _seed(store_path)
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        window.chat.open(short_id)
        _shortcut(window, "Ctrl+F").trigger()
        dialog = window.features["search"].dialog
        assert dialog.conversation_id == short_id
        qtbot.keyClicks(dialog.box, "message")  # in every message of the long one, in none of this one
        qt_wait_until(lambda: not dialog.service.searching and dialog.status.text() == dialog.tr("No message contains this"), 30, "no hit here")
        assert dialog.results.rowCount() == 0
        dialog.reject()

        window.chat.open(long_id)
        _shortcut(window, "Ctrl+F").trigger()
        assert dialog.conversation_id == long_id
        dialog.search_now()
        qt_wait_until(lambda: dialog.results.rowCount() == search_service.query.PAGE, 30, "a first page")
        dialog.results.fetchMore()  # scrolling to the end asks for the next page
        qt_wait_until(lambda: dialog.results.rowCount() == 2 * search_service.query.PAGE, 30, "a second page")
        ids = [h.message_id for h in dialog.results.hits]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
    finally:
        window.shutdown()


def test_the_window_keeps_working_while_a_search_runs_and_a_reply_streams(qtbot, store_path, starter_model, monkeypatch):
    """The search is held on its thread until the test lets it go: meanwhile the GUI thread runs its timers,
    shows the streaming reply and takes typing. Had the search run on the GUI thread, none of it could happen."""
    gate, entered = threading.Event(), threading.Event()
    real_search = search_service.query.search

    def held_search(*args, **kwargs):
        entered.set()
        assert gate.wait(120), "the test never let the search go"
        return real_search(*args, **kwargs)

    monkeypatch.setattr(search_service.query, "search", held_search)
    window = open_window(qtbot, store_path, starter_model, settings=ConversationSettings(temperature=0.7, max_tokens=48, n_ctx=1024, seed=3))
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(5)
    try:
        assert window.chat.send("Tell me a long story about a lighthouse keeper.")
        reply_row = len(window.chat.messages.messages) - 1
        dialog = window.features["search"].search_all()
        qtbot.keyClicks(dialog.box, "lighthouse")
        dialog.search_now()
        qt_wait_until(entered.is_set, 30, "the search running on its thread")
        before_ticks, before_text = len(ticks), window.chat.messages.message(reply_row).content
        qt_wait_until(lambda: len(window.chat.messages.message(reply_row).content) > len(before_text) or not window.chat.any_generating, 120, "the reply growing")
        qtbot.keyClicks(dialog.box, " keeper")  # typing goes on
        assert dialog.box.text() == "lighthouse keeper"
        assert len(ticks) > before_ticks and dialog.service.searching and dialog.results.rowCount() == 0
        gate.set()
        qt_wait_until(lambda: dialog.results.rowCount() >= 1, 30, "the results once the search ran")
        assert "<b>keeper</b>" in dialog.results.index(0).data(SnippetHtmlRole) or "<b>lighthouse</b>" in dialog.results.index(0).data(SnippetHtmlRole)
        wait_reply(qtbot, window)
    finally:
        gate.set()
        timer.stop()
        window.shutdown()


def test_a_hit_in_the_folded_middle_of_a_long_message_opens_it_whole_at_the_word(qtbot, store_path, starter_model):
    log = "Here is the log:\n" + "\n".join(f"05:{i // 60:02d}:{i % 60:02d} GET /items/{i} 200" for i in range(3_000)).replace("/items/1500 200", "/items/1500 503 Upstream-Timeout") + "\nWhy?"
    store = Store(store_path)
    conv = store.create_conversation("A pasted log")
    message = store.add_message(conv.id, "user", log)
    store.add_message(conv.id, "assistant", "Look at the 503.")
    store.close()
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        window.chat.open(conv.id)
        qt_wait_until(lambda: window.chat_view.widgets and window.chat_view.widgets[0].long.isVisible(), 30, "the log shown folded")
        assert not window.chat_view.widgets[0].long.whole.isVisible()
        _shortcut(window, "Ctrl+F").trigger()
        dialog = window.features["search"].dialog
        qtbot.keyClicks(dialog.box, "upstream timeout")
        qt_wait_until(lambda: dialog.results.rowCount() == 1, 30, "the hit listed")
        qtbot.keyClick(dialog.box, Qt.Key.Key_Return)
        qt_wait_until(lambda: window.chat_view.revealed is not None and window.chat_view.revealed.message.id == message.id, 30, "the view at the message")
        long = window.chat_view.revealed.long
        assert long.expanded
        qt_wait_until(long.whole.isVisible, 10, "the whole text shown")
        assert long.whole.textCursor().selectedText().casefold() in ("upstream", "timeout")  # the word searched for, selected
        cursor_line = long.whole.cursorRect()
        assert long.whole.viewport().rect().contains(cursor_line)  # and in sight, 1,500 lines down the box

        window.chat.open(None)
        window.chat.open(conv.id)  # a word the folded message shows leaves it folded
        qt_wait_until(lambda: window.chat_view.widgets and window.chat_view.widgets[0].long.isVisible(), 30, "the log shown folded")
        assert window.chat.reveal_message(message.id, ["why"]) and not window.chat_view.widgets[0].long.expanded
    finally:
        window.shutdown()
