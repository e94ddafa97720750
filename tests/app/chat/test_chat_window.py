"""Chatting through the real window: send, stop, regenerate, edit and resend, metrics, persistence."""

from __future__ import annotations

import sqlite3
import time

import pytest
from PySide6.QtCore import Qt

from app.chat.controller import ConversationSettings
from app.chat.message_model import ContentRole
from app.chat.render_pace import FASTEST_MS, SLOWEST_MS
from app.metrics import figures
from app.storage import Store
from app.storage import store as st
from window_helpers import open_window, wait_loaded, wait_reply

pytestmark = pytest.mark.slow

LONG = ConversationSettings(temperature=0.8, max_tokens=1500, n_ctx=2048, seed=3)


def type_and_send(qtbot, window, text):
    window.composer.edit.setFocus()
    window.composer.edit.setPlainText(text)
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)


def db_rows(path, sql, *args):
    with sqlite3.connect(str(path)) as db:
        return db.execute(sql, args).fetchall()


def test_send_streams_the_reply_in_batches_and_stores_it(qtbot, window, store_path):
    content_updates = []
    window.chat.messages.dataChanged.connect(lambda a, b, roles=(): content_updates.append(list(roles)))
    type_and_send(qtbot, window, "Name three colours.")
    assert window.composer.text() == ""  # Enter sent it
    assert window.chat.generating and window.composer.generating
    wait_reply(qtbot, window)

    msgs = window.chat.messages.messages
    assert [m.role for m in msgs] == ["user", "assistant"]
    reply = msgs[1]
    assert reply.content.strip() and reply.state == st.COMPLETE
    assert reply.record.stats.completion_tokens > 0 and reply.record.finish_reason in ("stop", "length")
    # Streamed: the text arrived in more than one batch, but fewer batches than tokens.
    streamed = [r for r in content_updates if r == [ContentRole]]
    assert 1 <= len(streamed) <= reply.record.stats.completion_tokens
    # The widget shows it, and the store has it.
    assert window.chat_view.widgets[1].body.text == reply.content
    assert db_rows(store_path, "SELECT role, content, state FROM messages ORDER BY position") == [
        ("user", "Name three colours.", "complete"), ("assistant", reply.content, "complete")]
    # The conversation got its title from the first message.
    assert window.chat.current.title == "Name three colours."


def test_shift_enter_is_a_new_line_and_empty_text_is_not_sent(qtbot, window):
    window.composer.edit.setFocus()
    qtbot.keyClicks(window.composer.edit, "first")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(window.composer.edit, "second")
    assert window.composer.text() == "first\nsecond"
    assert not window.chat.generating
    window.composer.edit.setPlainText("   \n  ")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    assert not window.chat.generating and window.chat.messages.rowCount() == 0
    assert not window.composer.button.isEnabled()


def test_escape_stops_the_reply_and_keeps_the_partial_text(qtbot, window, store_path):
    window.chat.default_settings = LONG
    type_and_send(qtbot, window, "Write a very long essay about the sea.")
    qtbot.waitUntil(lambda: len(window.chat.messages.messages[-1].content) > 20, timeout=60_000)
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Escape)
    wait_reply(qtbot, window, timeout=10_000)
    reply = window.chat.messages.messages[-1]
    assert reply.state == st.STOPPED and reply.record.finish_reason == "cancelled"
    assert reply.content and reply.record.stats.completion_tokens < LONG.max_tokens
    assert window.chat_view.widgets[-1].badge.isVisible()
    assert db_rows(store_path, "SELECT content, state FROM messages WHERE role = 'assistant'") == [(reply.content, "stopped")]


def test_regenerate_writes_a_new_reply_beside_the_last_one(qtbot, window, store_path):
    window.chat.send("Say hello.")
    wait_reply(qtbot, window)
    first = window.chat.messages.messages[-1]
    assert window.action_regenerate.isEnabled()
    window.action_regenerate.trigger()
    assert window.chat.generating
    wait_reply(qtbot, window)
    msgs = window.chat.messages.messages
    assert len(msgs) == 2 and msgs[-1].id != first.id
    assert msgs[-1].content == first.content  # greedy: the same prompt gives the same reply
    # Nothing but the cache's last token was evaluated again: the runtime reused the prompt.
    assert msgs[-1].record.stats.prompt_tokens_evaluated == 1
    # The first reply is kept, as a sibling: ◀ 1/2 ▶ shows it again.
    assert db_rows(store_path, "SELECT id, parent_id FROM messages ORDER BY id") == [(msgs[0].id, None), (first.id, msgs[0].id), (msgs[1].id, msgs[0].id)]
    assert (msgs[1].branch, msgs[1].branches) == (2, 2) and window.chat_view.widgets[1].branch_bar.label.text() == "2/2"


def test_edit_and_resend_keeps_the_message_as_it_was_and_its_replies_as_a_branch(qtbot, window, store_path):
    window.chat.send("Name a fruit.")
    wait_reply(qtbot, window)
    window.chat.send("Name a vegetable.")
    wait_reply(qtbot, window)
    assert window.chat.messages.rowCount() == 4
    assert window.chat.edit_and_resend(0, "Name an animal.")
    wait_reply(qtbot, window)
    msgs = window.chat.messages.messages
    assert [m.role for m in msgs] == ["user", "assistant"]
    assert msgs[0].content == "Name an animal." and msgs[1].state == st.COMPLETE and msgs[1].content
    assert (msgs[0].branch, msgs[0].branches) == (2, 2)
    # Nothing was lost: the first question and its two turns are the other branch.
    assert len(db_rows(store_path, "SELECT id FROM messages")) == 6
    window.chat.switch_branch(0, -1)
    assert [m.content for m in window.chat.messages.messages][::2] == ["Name a fruit.", "Name a vegetable."]
    # Editing a reply (not a user message) is refused.
    assert not window.chat.edit_and_resend(1, "x")


def test_metrics_panel_updates_twice_a_second_while_streaming_and_keeps_the_final_figures(qtbot, window):
    window.chat.default_settings = ConversationSettings(temperature=0.8, max_tokens=48, n_ctx=2048, seed=5)
    samples = []
    window.poller.sig_sample.connect(lambda m: samples.append((time.monotonic(), m)))
    reading_before = window.link.reading_cpu_s
    window.chat.send("Tell me a long story about a dragon.")
    renders_before = window.metrics_panel.updates
    started = time.monotonic()
    wait_reply(qtbot, window)
    duration = time.monotonic() - started
    live = [m for _t, m in samples if m.generation is not None]
    assert live and any(m.generation.completion_tokens > 0 for m in live)
    # At least two panel updates a second from the runtime's own figures, for as long as the reply streamed.
    assert len(live) >= 2 * duration - 2, (len(live), duration)
    assert window.metrics_panel.updates - renders_before >= len(live)
    reply = window.chat.messages.messages[-1]
    panel = window.metrics_panel
    # The final figures are the reply's own, as the runtime measured them.
    assert panel.speed.text() == figures.speed(reply.record.stats.decode_tokens_per_s)
    assert panel.value_of("ttft") == figures.seconds(reply.record.stats.ttft_ms)
    evaluated = reply.record.stats.prompt_tokens_evaluated
    assert panel.value_of("reuse") == f"{reply.record.stats.prompt_tokens_reused:,} / {evaluated:,} token{'' if evaluated == 1 else 's'}"
    qtbot.waitUntil(lambda: (panel.value_of("context") or "").endswith(" / 2,048 tokens"), timeout=5_000)
    assert not panel.value_of("context").startswith("0 ")
    assert panel.value_of("kv").endswith("MB") and panel.value_of("rss").endswith("MB")
    assert len(panel.sparkline.samples) >= 1
    # What the window spent reading the runtime's lines is counted apart (app/chat/render_pace.py leaves it out).
    assert window.link.reading_cpu_s > reading_before
    assert FASTEST_MS <= window.chat._flush_timer.interval() <= SLOWEST_MS


def test_a_streaming_reply_is_checkpointed_to_disk(qtbot, window, store_path):
    window.chat.default_settings = LONG
    window.chat.send("Write a very long essay about mountains.")
    qtbot.waitUntil(lambda: len(window.chat.messages.messages[-1].content) > 0, timeout=60_000)
    stored = lambda: db_rows(store_path, "SELECT content, state FROM messages WHERE role = 'assistant'")
    qtbot.waitUntil(lambda: any(content for content, _state in stored()), timeout=2_100)  # checkpointed at least every 2 s while it streams
    assert window.chat.generating, "the reply should still be streaming for this test to mean anything"
    ((content, state),) = stored()
    assert state == "streaming" and content
    window.chat.stop()
    wait_reply(qtbot, window)
    # The checkpoint is a beginning of the reply (it may hold text the view had not shown yet when it was read).
    assert window.chat.messages.messages[-1].content.startswith(content)


def test_restarting_the_app_finds_the_conversation(qtbot, starter_model, store_path):
    first = open_window(qtbot, store_path, starter_model)
    first.chat.send("Remember the word pineapple.")
    wait_reply(qtbot, first)
    conv_id = first.chat.current.id
    texts = [m.content for m in first.chat.messages.messages]
    first.resize(820, 560)
    size = (first.width(), first.height())
    assert size != (1280, 800)
    first.shutdown()
    first.close()

    second = open_window(qtbot, store_path, starter_model, load=False)
    try:
        assert second.chat.current is not None and second.chat.current.id == conv_id
        assert [m.content for m in second.chat.messages.messages] == texts
        assert len(second.chat_view.widgets) == 2
        assert second.sidebar.list.currentIndex().isValid()
        # The geometry came back (Qt keeps a restored window inside the screen, 800 px wide offscreen).
        screen_width = second.screen().availableGeometry().width()
        assert second.height() == size[1] and second.width() <= max(size[0], screen_width) and second.width() != 1280
    finally:
        second.shutdown()


def test_conversation_list_new_rename_filter_delete_and_undo(qtbot, window):
    a = window.chat.new_conversation("Alpha notes")
    qtbot.wait(5)
    b = window.chat.new_conversation("Beta plans")
    proxy = window.sidebar.proxy
    titles = lambda: [proxy.index(r, 0).data() for r in range(proxy.rowCount())]
    assert titles() == ["Beta plans", "Alpha notes"]  # newest first
    window.sidebar.filter.setText("alp")
    assert titles() == ["Alpha notes"]
    window.sidebar.filter.clear()
    window.chat.rename(a.id, "Gamma")
    assert set(titles()) == {"Gamma", "Beta plans"}
    window.chat.delete(b.id)
    assert titles() == ["Gamma"] and window.store.conversation(b.id) is None
    assert window.action_undo_delete.isEnabled()
    window.action_undo_delete.trigger()
    assert set(titles()) == {"Gamma", "Beta plans"} and window.chat.current.id == b.id


def test_settings_are_per_conversation_and_remembered(qtbot, window, store_path):
    conv = window.chat.new_conversation()
    window.chat.set_settings("You are a pirate.", ConversationSettings(temperature=0.0, max_tokens=7, n_ctx=2048))
    window.chat.send("Hello")
    wait_reply(qtbot, window)
    reply = window.chat.messages.messages[-1]
    assert reply.record.stats.completion_tokens <= 7
    other = window.chat.new_conversation()
    assert window.chat.settings().max_tokens == window.chat.default_settings.max_tokens
    window.chat.open(conv.id)
    assert window.chat.settings().max_tokens == 7 and window.chat.current.system_prompt == "You are a pirate."
    reopened = Store(store_path)
    assert reopened.conversation(conv.id).settings["max_tokens"] == 7
    assert other.id != conv.id


def test_two_conversations_stream_at_once_and_both_replies_are_stored(qtbot, window, store_path):
    window.chat.default_settings = ConversationSettings(temperature=0.0, max_tokens=48, n_ctx=2048, seed=1)
    window.chat.new_conversation()
    first = window.chat.current
    type_and_send(qtbot, window, "Write a short poem about the sea.")
    qtbot.waitUntil(lambda: bool(window.chat.replies[first.id].text), timeout=120_000)  # A streams
    window.chat.new_conversation()
    second = window.chat.current
    assert not window.chat.generating and not window.composer.generating  # B can be written to while A streams
    type_and_send(qtbot, window, "Name three rivers in Europe.")
    # Both stream at the same time: B's reply has text while A's is still going.
    qtbot.waitUntil(lambda: second.id in window.chat.replies and bool(window.chat.replies[second.id].text), timeout=120_000)
    assert first.id in window.chat.replies, "A had finished before B streamed: nothing ran at once"
    wait_reply(qtbot, window)
    rows = db_rows(store_path, "SELECT conversation_id, role, state, length(content) FROM messages WHERE role = 'assistant' ORDER BY conversation_id")
    assert sorted((c, s) for c, _r, s, _n in rows) == sorted([(first.id, "complete"), (second.id, "complete")])
    assert all(n > 0 for *_rest, n in rows)
    # Back in A, its whole reply is on screen.
    window.sidebar.select(first.id)
    window.chat.open(first.id)
    assert window.chat.messages.messages[-1].state == st.COMPLETE and window.chat.messages.messages[-1].content
