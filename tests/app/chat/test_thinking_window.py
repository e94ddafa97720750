"""#30 in the real window, over the real runtime and the starter model: a database of the released Lokal
(schema 2) opens, migrated, and a reply cut by its length continues in place as one message; a thinking
reply is folded, stored apart from its answer, continued in place from the live cache, and its figures
reach the metrics panel."""

from __future__ import annotations

import json
import sqlite3

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.chat import export, words
from app.chat.controller import ConversationSettings
from app.metrics import figures
from app.storage import store as st
from runtime.protocol import methods
from window_helpers import N_CTX, open_window, wait_reply

pytestmark = pytest.mark.slow

OLD_SETTINGS = '{"temperature": 0.0, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.1, "max_tokens": 4, "n_ctx": 2048, "seed": 1, "speculation": null}'


def released_database(path) -> None:
    """What the released Lokal (main 6bfe667, schema 2) left: a conversation whose replies are 4 tokens long at most."""
    with sqlite3.connect(str(path)) as db:
        for version, script in enumerate(st.MIGRATIONS[:2], start=1):
            db.executescript(script + f"\nPRAGMA user_version = {version};")
        db.execute("INSERT INTO conversations VALUES ('c1', 'Counting', 1.0, 2.0, '', ?)", (OLD_SETTINGS,))
        db.execute("INSERT INTO messages (conversation_id, position, role, content, state, created_at) VALUES ('c1', 0, 'user', 'Say hello.', 'complete', 1.0)")
        db.execute(
            "INSERT INTO messages (conversation_id, position, role, content, state, stats, created_at, model) "
            "VALUES ('c1', 1, 'assistant', 'Hello!', 'complete', '{\"completion_tokens\": 3, \"decode_tokens_per_s\": 40.0, \"finish_reason\": \"stop\"}', 1.5, 'SmolLM2')"
        )
        db.execute("INSERT INTO app_state VALUES ('last_conversation', 'c1')")


def test_a_released_database_opens_and_a_reply_cut_by_its_length_continues_in_place(qtbot, store_path, starter_model, english):
    released_database(store_path)
    window = open_window(qtbot, store_path, starter_model)
    try:
        assert window.store.schema_version == st.SCHEMA_VERSION
        assert window.chat.current is not None and window.chat.current.id == "c1"
        assert [m.content for m in window.chat.messages.messages] == ["Say hello.", "Hello!"]
        assert window.chat.settings().max_tokens == 4  # a length the user chose stays (only the old default, 512, is dropped)
        window.composer.edit.setFocus()
        window.composer.edit.setPlainText("Write a long story about a lighthouse.")
        qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
        wait_reply(qtbot, window)
        cut = window.chat.messages.messages[-1]
        cut_text = cut.content  # the model's message object grows in place as the reply continues
        assert cut.record is not None and cut.record.finish_reason == "length", cut
        widget = window.chat_view.widgets[-1]
        assert not widget.cut.isHidden() and not widget.continue_button.isHidden()
        assert widget.cut_note.text() == "The reply was cut at its length limit."
        qtbot.mouseClick(widget.continue_button, Qt.MouseButton.LeftButton)
        assert window.chat.generating
        wait_reply(qtbot, window)
        stored = window.store.messages("c1")
        assert len(stored) == 4  # the continued reply is still one message
        longer = stored[-1]
        assert longer.id == cut.id and longer.state == st.COMPLETE
        assert longer.content.startswith(cut_text) and len(longer.content) > len(cut_text)
        assert window.chat.messages.messages[-1].content == longer.content
    finally:
        window.shutdown()


# The starter model does not think on its own: a grammar makes its reply begin with a `<think>…</think>` block, as a
# reasoning model's does (runtime/reasoning splits it off). The window sends no grammar, so the test adds it to the
# window's chat.generate requests on their way to the runtime link.
THINKING = r'''root ::= "<think>" thought "</think>" "\n"* answer
thought ::= [a-z \n]{8,40}
answer ::= [A-Za-z ,.]{4,24}'''
# A grammar constrains the tokens a request adds: a reply cut while thinking is continued by one that goes on thinking.
GOES_ON_THINKING = THINKING.replace('"<think>" thought', "thought")


def think_through_a_grammar(monkeypatch, window) -> list:
    sent = []
    call = window.link.call

    def with_grammar(method, params=None, *args, **kwargs):
        if method == methods.CHAT_GENERATE:
            params.grammar = GOES_ON_THINKING if params.continue_reply else THINKING
            sent.append(params)
        return call(method, params, *args, **kwargs)

    monkeypatch.setattr(window.link, "call", with_grammar)
    return sent


def test_a_thinking_reply_from_the_runtime_is_folded_stored_apart_and_continued_in_place(qtbot, monkeypatch, store_path, starter_model, english):
    window = open_window(qtbot, store_path, starter_model, ConversationSettings(temperature=0.0, seed=1, n_ctx=N_CTX, max_tokens=6))
    sent = think_through_a_grammar(monkeypatch, window)
    try:
        window.composer.edit.setFocus()
        window.composer.edit.setPlainText("Why is the sky blue?")
        qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
        wait_reply(qtbot, window)
        # Six tokens: cut while thinking. The thinking is there, folded; no answer yet; the cut said, with Continue.
        cut = window.store.messages(window.chat.current.id)[-1]
        assert cut.record.finish_reason == "length" and cut.reasoning and cut.content == "", cut
        assert "<think>" not in cut.reasoning
        widget = window.chat_view.widgets[-1]
        assert not widget.thinking.isHidden() and widget.thinking.toggle.text().startswith("Thought for")
        assert widget.thinking.fold.isHidden()  # folded by default
        assert not widget.continue_button.isHidden()
        # The user lifts the limit (until the model stops), then continues.
        window.chat.set_settings("", ConversationSettings(temperature=0.0, seed=1, n_ctx=N_CTX))
        qtbot.mouseClick(widget.continue_button, Qt.MouseButton.LeftButton)
        assert sent[-1].continue_reply and sent[-1].max_tokens is None
        assert (sent[-1].messages[-1].content, sent[-1].messages[-1].reasoning) == ("", cut.reasoning)
        wait_reply(qtbot, window)
        messages = window.store.messages(window.chat.current.id)
        assert len(messages) == 2  # the question and one reply, however often it was continued
        reply = messages[-1]
        assert reply.id == cut.id and reply.state == st.COMPLETE and reply.record.finish_reason == "stop", reply
        assert reply.reasoning.startswith(cut.reasoning) and reply.content and "</think>" not in reply.content + reply.reasoning
        assert reply.thinking_ms > 0
        stats = reply.record.stats
        # In place: no new assistant header, the reply so far came from the live cache.
        assert stats.prompt_tokens_evaluated <= 1, stats
        # Copy copies the answer alone; the JSON export keeps the thinking beside it.
        qtbot.mouseClick(window.chat_view.widgets[-1].buttons["copy"], Qt.MouseButton.LeftButton)
        assert QGuiApplication.clipboard().text() == reply.content
        exported = json.loads(export.to_json(window.chat.current, messages))["messages"][-1]
        assert (exported["content"], exported["reasoning"]) == (reply.content, reply.reasoning)
    finally:
        window.shutdown()


def test_the_metrics_panel_shows_a_thinking_replys_figures_from_the_runtime(qtbot, monkeypatch, store_path, starter_model, english):
    window = open_window(qtbot, store_path, starter_model, ConversationSettings(temperature=0.0, seed=1, n_ctx=N_CTX))
    think_through_a_grammar(monkeypatch, window)
    try:
        assert window.chat.settings().max_tokens is None  # until the model stops: the grammar's end
        window.composer.edit.setFocus()
        window.composer.edit.setPlainText("Why is the sky blue?")
        qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
        wait_reply(qtbot, window)
        reply = window.store.messages(window.chat.current.id)[-1]
        stats = reply.record.stats
        assert reply.record.finish_reason == "stop" and stats.reasoning_tokens > 0 and stats.answer_tokens > 0
        panel = window.metrics_panel
        assert panel.value_of("reasoning").startswith(figures.tokens(stats.reasoning_tokens))
        assert panel.value_of("answer") == figures.tokens(stats.answer_tokens)
        assert panel.value_of("ttfat") == figures.seconds(stats.ttfat_ms) and stats.ttfat_ms >= stats.ttft_ms
        assert window.chat_view.widgets[-1].thinking.toggle.text() == words.thinking_caption(False, stats.thinking_ms)
    finally:
        window.shutdown()
