"""In the real window: a message of yours is edited in place (Enter resends, Esc cancels, no dialog), and
the conversation list elides long titles, with the whole title in the tooltip and never a sideways scroll."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from window_helpers import wait_reply

pytestmark = pytest.mark.slow

LONG_TITLE = "Planning the family trip to Lisbon, Porto and the Algarve in late September, with the train times " * 2


@pytest.fixture
def window(module_window):
    module_window.chat.new_conversation()
    return module_window


def test_a_message_is_edited_in_place_enter_resends_and_esc_cancels(qtbot, window):
    window.chat.send("Name a fruit.")
    wait_reply(qtbot, window)
    window.chat.send("Name a vegetable.")
    wait_reply(qtbot, window)
    first = window.chat_view.widgets[0]
    replies_before = [m.content for m in window.chat.messages.messages]

    # Edit (the button), then Esc: the text comes back as it was, nothing is sent.
    first.buttons["edit"].click()
    assert first.editing and first.body.isHidden() and first.editor.text() == "Name a fruit."
    assert QApplication.activeModalWidget() is None  # in place: no dialog
    assert first.editor.edit.hasFocus()
    qtbot.keyClicks(first.editor.edit, " Or two.")
    qtbot.keyClick(first.editor.edit, Qt.Key.Key_Escape)
    assert not first.editing and first.body.isVisible()
    assert [m.content for m in window.chat.messages.messages] == replies_before and not window.chat.generating

    # Ctrl+E edits your last message; Shift+Enter is a new line; Enter resends it as a new branch.
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    last_user = window.chat_view.widgets[2]
    assert last_user.editing and last_user.editor.edit.hasFocus()
    qtbot.keyClick(last_user.editor.edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(last_user.editor.edit, "Name an animal.")
    qtbot.keyClick(last_user.editor.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(last_user.editor.edit, "Just one.")
    qtbot.keyClick(last_user.editor.edit, Qt.Key.Key_Return)
    assert window.chat.generating
    wait_reply(qtbot, window)
    messages = window.chat.messages.messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2].content == "Name an animal.\nJust one." and messages[3].content and messages[3].id != 0
    assert messages[:2] == window.chat.messages.messages[:2] and messages[0].content == "Name a fruit."
    assert not window.chat_view.widgets[2].editing and window.chat_view.widgets[2].body.text == "Name an animal.\nJust one."
    assert window.composer.edit.hasFocus()  # back to the composer for the next message


def test_an_edit_is_not_resent_while_a_reply_streams(qtbot, window):
    window.chat.send("Count to three.")
    wait_reply(qtbot, window)
    widget = window.chat_view.widgets[0]
    widget.start_editing()
    window.chat.regenerate()  # a reply streams now
    widget.editor.edit.setFocus()
    qtbot.keyClick(widget.editor.edit, Qt.Key.Key_Return)
    assert "Stop the reply first" in window.statusBar().currentMessage() and widget.editing
    wait_reply(qtbot, window)
    qtbot.keyClick(widget.editor.edit, Qt.Key.Key_Escape)


@pytest.mark.parametrize("width", [200, 260, 420])
def test_long_titles_are_elided_with_the_whole_title_in_the_tooltip_and_no_sideways_scroll(qtbot, window, width):
    long = window.chat.new_conversation(LONG_TITLE)
    window.chat.new_conversation("Regex for ISO dates")
    sidebar = window.sidebar
    window.splitter.setSizes([width, 900, 270])
    qtbot.waitUntil(lambda: abs(sidebar.width() - width) <= 2, timeout=5_000)
    QApplication.processEvents()
    view = sidebar.list
    bar = view.horizontalScrollBar()
    assert bar.maximum() == 0 and not bar.isVisible(), f"{width} px: the list scrolls sideways"
    row = next(r for r in range(sidebar.proxy.rowCount()) if sidebar.proxy.index(r, 0).data() == LONG_TITLE)
    index = sidebar.proxy.index(row, 0)
    # The row ends inside the list, so the style draws the title cut with an ellipsis.
    assert view.visualRect(index).right() < view.viewport().width()
    assert QFontMetrics(view.font()).horizontalAdvance(LONG_TITLE) > view.viewport().width()
    assert index.data(Qt.ItemDataRole.ToolTipRole).startswith(LONG_TITLE)
    window.chat.delete(long.id)


def test_one_message_is_edited_at_a_time(qtbot, window):
    window.store.add_message(window.chat.current.id, "user", "first")
    window.store.add_message(window.chat.current.id, "assistant", "one")
    window.store.add_message(window.chat.current.id, "user", "second")
    conv = window.chat.current.id
    window.chat.current = None
    window.chat.open(conv)
    first, _reply, second = window.chat_view.widgets
    qtbot.waitUntil(second.isVisible, timeout=5_000)  # a widget added to a shown layout is shown by a queued call
    first.buttons["edit"].click()
    second.buttons["edit"].click()
    assert second.editing and not first.editing and first.body.isVisible()
    qtbot.keyClick(second.editor.edit, Qt.Key.Key_Escape)
    assert not second.editing
