"""The runtime dies (kill -9 mid-reply, SIGABRT as llama.cpp's abort would) and the window recovers."""

from __future__ import annotations

import os
import signal
import sqlite3

import pytest

from app.chat.controller import ConversationSettings
from app.runtime_link import ConnectionState
from app.storage import store as st
from window_helpers import wait_loaded, wait_reply

pytestmark = pytest.mark.slow


def test_kill_9_mid_reply_keeps_the_conversation_and_restarts(qtbot, window, store_path):
    window.chat.default_settings = ConversationSettings(temperature=0.8, max_tokens=1500, n_ctx=2048, seed=2)
    window.chat.send("Write a very long essay about rivers.")
    qtbot.waitUntil(lambda: len(window.chat.messages.messages[-1].content) > 10, timeout=120_000)
    shown_before_kill = window.chat.messages.messages[-1].content
    old_pid = window.link.pid
    states = []
    window.link.sig_state_changed.connect(states.append)
    os.kill(old_pid, signal.SIGKILL)

    qtbot.waitUntil(lambda: window.banner.isVisible() and "SIGKILL" in window.banner_text.text(), timeout=10_000)
    assert "stopped unexpectedly" in window.banner_text.text()
    wait_reply(qtbot, window, timeout=10_000)
    reply = window.chat.messages.messages[-1]
    assert reply.state == st.INTERRUPTED
    assert reply.content.startswith(shown_before_kill) and reply.content
    assert window.chat_view.widgets[-1].badge.isVisible() and "Interrupted" in window.chat_view.widgets[-1].badge.text()
    with sqlite3.connect(str(store_path)) as db:
        assert db.execute("SELECT role, state, content FROM messages ORDER BY position").fetchall() == [
            ("user", "complete", "Write a very long essay about rivers."), ("assistant", "interrupted", reply.content)]

    # A new runtime, the model loaded again, and the window says so.
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: "Recovered" in window.banner_text.text(), timeout=10_000)
    assert window.link.pid != old_pid and window.link.state == ConnectionState.READY
    assert ConnectionState.CRASHED in states and ConnectionState.RESTARTING in states
    assert window.session.loaded.path == window.session.wanted.path

    # The conversation goes on, with the interrupted reply in its history.
    window.chat.default_settings = ConversationSettings(temperature=0.0, max_tokens=6, n_ctx=2048)
    window.chat.send("Thanks. Now say hi.")
    wait_reply(qtbot, window)
    msgs = window.chat.messages.messages
    assert [m.state for m in msgs] == [st.COMPLETE, st.INTERRUPTED, st.COMPLETE, st.COMPLETE]
    assert msgs[-1].record.stats.prompt_tokens > 0 and msgs[-1].content


def test_sigabrt_while_idle_is_reported_and_a_message_sent_meanwhile_waits_for_the_reload(qtbot, window):
    os.kill(window.link.pid, signal.SIGABRT)
    qtbot.waitUntil(lambda: "SIGABRT" in window.banner_text.text(), timeout=10_000)
    assert "llama.cpp aborted" in window.banner_text.text()
    assert window.link.state in (ConnectionState.CRASHED, ConnectionState.RESTARTING, ConnectionState.STARTING)
    # Sent before the new runtime is up: it waits in the queue, behind the model's reload.
    assert window.chat.send("Hello")
    wait_reply(qtbot, window, timeout=240_000)
    assert window.link.restarts == 1 and window.session.loaded is not None
    reply = window.chat.messages.messages[-1]
    assert reply.state == st.COMPLETE and reply.content


def test_kill_9_mid_batch_loses_no_stored_message_in_any_conversation(qtbot, window, store_path):
    window.chat.default_settings = ConversationSettings(temperature=0.8, max_tokens=1500, n_ctx=2048, seed=4)
    asked = {}
    for question in ("Write a very long essay about mountains.", "Write a very long essay about forests."):
        conversation = window.chat.new_conversation()
        window.chat.send(question)
        asked[conversation.id] = question
    # Both stream, decoded in the same batches.
    qtbot.waitUntil(lambda: len(window.chat.replies) == 2 and all(len(r.text) > 10 for r in window.chat.replies.values()), timeout=120_000)
    shown = {cid: reply.text for cid, reply in window.chat.replies.items()}
    os.kill(window.link.pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: not window.chat.any_generating, timeout=10_000)
    with sqlite3.connect(str(store_path)) as db:
        for conversation_id, question in asked.items():
            rows = db.execute("SELECT role, state, content FROM messages WHERE conversation_id = ? ORDER BY position", (conversation_id,)).fetchall()
            assert [(role, state) for role, state, _ in rows] == [("user", "complete"), ("assistant", "interrupted")]
            assert rows[0][2] == question
            assert rows[1][2].startswith(shown[conversation_id]) and rows[1][2]
    wait_loaded(qtbot, window)
