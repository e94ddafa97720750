"""A long message of yours (a pasted log of 2 MB) shows its first and last lines, folded, instead of being
formatted as Markdown on the window's thread (411-501 ms for a log of 28,095 lines, each time its conversation
opened: bench/long_message.py); Show all opens the whole text in a box that scrolls. The real widgets offscreen, then the
real window and runtime."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.chat import long_text
from app.chat.long_text import fold
from app.chat.words import reply_error
from app.chat.message_model import MessageListModel
from app.chat.widgets.message_view import ChatView
from app.storage import store as st
from app.storage.store import Message
from runtime.protocol import ContextOverflow, ErrorCode, RpcError
from window_helpers import wait_reply

LINE = "2026-12-07 05:55:55 INFO worker[12] handled request id=42 path=/api/v1/items status=200 in 12ms"
LOG = "Here is my log:\n" + "\n".join(f"{LINE} #{i}" for i in range(20_000)) + "\nWhy does it fail?"


def test_a_short_message_is_not_folded_and_a_long_one_shows_its_head_and_tail():
    assert fold("Name three colours.") is None
    assert fold("\n".join(["x"] * long_text.FOLD_LINES)) is None
    assert fold("\n".join(["x"] * (long_text.FOLD_LINES + 1))) is not None
    assert fold("y" * (long_text.FOLD_CHARS + 1)) is not None
    folded = fold(LOG)
    assert folded is not None
    assert folded.head.split("\n") == ["Here is my log:"] + [f"{LINE} #{i}" for i in range(7)]
    assert folded.tail.split("\n") == [f"{LINE} #{i}" for i in range(19_997, 20_000)] + ["Why does it fail?"]
    assert folded.lines == 20_002 and folded.hidden_lines == 20_002 - 8 - 4


def test_one_line_of_megabytes_is_cut_and_lines_are_never_shown_twice():
    folded = fold("z" * 2_000_000)
    assert folded is not None and folded.head == "z" * long_text.LINE_CHARS + "…" and folded.tail == "" and folded.hidden_lines == 0
    ten = "\n".join(f"{i}" + "w" * 1_000 for i in range(10))  # long in characters, 10 lines: 8 in the head, the last 2 in the tail
    folded = fold(ten)
    assert folded is not None and [line[0] for line in folded.head.split("\n")] == list("01234567")
    assert [line[0] for line in folded.tail.split("\n")] == ["…", "…"] and folded.tail.endswith("w") and folded.hidden_lines == 0


def shown(widget) -> bool:
    return widget.isVisible()


def show_messages(qtbot, view: ChatView, messages: list[Message]) -> None:
    view.model.set_messages(messages)
    qtbot.waitUntil(lambda: all(w.isVisible() for w in view.widgets))  # a widget added to a shown one shows as the event loop turns


@pytest.fixture
def view(qtbot, english):
    widget = ChatView(MessageListModel())
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    return widget


def test_a_long_message_opens_folded_and_show_all_shows_every_line(qtbot, view):
    show_messages(qtbot, view, [Message(1, "c", 1, "user", LOG), Message(2, "c", 2, "assistant", "It does not fail.")])
    mine = view.widgets[0]
    assert shown(mine.long) and not shown(mine.body)
    assert mine.body.text == ""  # never formatted as Markdown
    assert mine.long.head.toPlainText().startswith("Here is my log:") and mine.long.tail.toPlainText().endswith("Why does it fail?")
    assert mine.long.summary.text() == "⋯ 19,990 more lines"
    assert mine.long.toggle in mine.focusables()  # Tab reaches Show all

    mine.long.toggle.click()
    assert shown(mine.long.whole) and not shown(mine.long.head) and not shown(mine.long.tail)
    assert mine.long.whole.toPlainText() == LOG and mine.long.summary.text() == "20,002 lines"
    assert mine.long.whole.hasFocus()
    assert mine.long.whole.height() < 40 * mine.long.whole.fontMetrics().lineSpacing()  # it scrolls, the chat does not grow by 20,000 lines
    mine.long.toggle.click()
    assert shown(mine.long.head) and not shown(mine.long.whole) and mine.long.whole.toPlainText() == ""

    mine.buttons["copy"].click()
    assert QGuiApplication.clipboard().text() == LOG  # Copy takes the whole message, not what shows


def test_editing_a_long_message_edits_all_of_it_and_esc_folds_it_again(qtbot, view):
    show_messages(qtbot, view, [Message(1, "c", 1, "user", LOG)])
    mine = view.widgets[0]
    mine.buttons["edit"].click()
    assert mine.editing and not shown(mine.long) and mine.editor.text() == LOG
    qtbot.keyClick(mine.editor.edit, Qt.Key.Key_Escape)
    assert not mine.editing and shown(mine.long) and not shown(mine.body)


def test_a_long_reply_is_formatted_whole_and_a_message_shortened_unfolds(qtbot, view):
    reply = "\n".join(f"- item {i}" for i in range(100))
    show_messages(qtbot, view, [Message(1, "c", 1, "user", LOG), Message(2, "c", 2, "assistant", reply)])
    assert shown(view.widgets[1].body) and view.widgets[1].long is None  # a model's reply is never folded
    assert view.widgets[1].body.text == reply
    mine = view.widgets[0]
    mine.show_message(Message(1, "c", 1, "user", "Short now."), is_last=False, generating=False)  # the same widget, its text changed
    assert shown(mine.body) and mine.body.text == "Short now." and not shown(mine.long)


def test_a_message_too_long_for_the_context_fails_with_what_to_do_and_other_errors_keep_their_words(english):
    words = reply_error(ContextOverflow(1_083_357, 2_048).error("the last message alone is 1083357 tokens long"))
    assert words.startswith("This message needs 1,083,357 tokens of context, and this conversation has 2,048.")
    assert "Attach the text as a file instead" in words and words.endswith("Or give the conversation a larger context (Ctrl+,).")
    # The model's trained context known: a larger context is offered only up to it, and not at all past it.
    within = reply_error(ContextOverflow(5_000, 2_048, 8_192).error("the last message alone is 5000 tokens long"))
    assert within.startswith("This message needs 5,000 tokens of context, and this conversation has 2,048.")
    assert within.endswith("Or give the conversation a larger context, up to 8,192 tokens (Ctrl+,).")
    beyond = reply_error(ContextOverflow(1_083_357, 2_048, 8_192).error("the last message alone is 1083357 tokens long"))
    assert beyond.startswith("This message needs 1,083,357 tokens of context, more than this model can read at once (8,192).")
    assert "Attach the text as a file instead" in beyond and "larger context" not in beyond
    assert reply_error(RpcError(ErrorCode.INTERNAL_ERROR, "llama_decode failed")) == "llama_decode failed"
    odd = RpcError(ErrorCode.CONTEXT_OVERFLOW, "too long", {"n_ctx": "many"})  # data not of the shape the runtime sends
    assert ContextOverflow.of(odd) is None and reply_error(odd) == "too long"


@pytest.mark.slow
def test_a_pasted_log_of_2_mb_is_sent_shown_folded_and_refused_by_the_runtime_by_its_size(qtbot, window, english):
    log = "Here is my log:\n" + "\n".join(f"{LINE} #{i}" for i in range(20_000)) + "\nWhy does it fail?"
    assert len(log) > 2_000_000
    window.composer.edit.setFocus()
    window.composer.edit.setPlainText(log)
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    assert window.composer.text() == ""
    wait_reply(qtbot, window)
    mine, reply = window.chat_view.widgets
    assert mine.message.content == log and shown(mine.long) and not shown(mine.body)
    assert reply.message.state == st.FAILED
    error = reply.message.record.error  # said plainly, by its size, with what to do instead
    assert error.startswith("This message needs ") and "more than this model can read at once (8,192)" in error  # SmolLM2's trained context
    assert "Attach the text as a file" in error and "larger context" not in error
    assert window.metrics_panel.state.text() == "Last reply: failed"
    assert window.banner.isVisible() and error in window.banner_text.text()
    qtbot.waitUntil(reply.footer.isVisible)
    chat = window.chat_view
    qtbot.waitUntil(lambda: chat.widget().width() <= chat.viewport().width())  # the long reason wraps: no message wider than the chat
    window.composer.edit.setPlainText("Name a colour.")  # and the runtime serves on
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    wait_reply(qtbot, window)
    assert window.chat.messages.messages[-1].state == st.COMPLETE and window.chat.messages.messages[-1].content.strip()


def test_the_parts_a_message_stops_showing_leave_the_tab_order_at_once(qtbot, view):
    """Folding dropped the body's parts with deleteLater alone: the Tab order, built from the message's children
    before Qt deleted them, then held deleted widgets (RuntimeError: Internal C++ object already deleted)."""
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent

    from app.ui.accessibility import chain

    show_messages(qtbot, view, [Message(1, "c", 1, "user", "Why?\n\n```python\nx = 1\n```\n\nThanks")])
    mine = view.widgets[0]
    assert len(mine.body.code_blocks) == 1
    mine.show_message(Message(1, "c", 1, "user", LOG), is_last=True, generating=False)  # the same widget, folded now
    order = mine.focusables()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert all(shiboken6.isValid(w) for w in order)
    chain(order)
