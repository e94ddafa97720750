"""The window's sampling settings (min p, repeat penalty) and a model whose chat template fails, through the real window."""

from __future__ import annotations

import pytest
from app.chat.controller import ConversationSettings
from app.metrics.figures import template_fallback_note
from gguf_files import with_chat_template
from window_helpers import N_CTX, open_window, wait_reply

pytestmark = pytest.mark.slow


def edit_settings(qtbot, window, **values):
    """Open Edit > Conversation settings, check its defaults, set `values`, press OK."""
    window.action_settings.trigger()
    dialog = window.settings_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=5_000)
    seen = dict(min_p=dialog.min_p.value(), repeat_penalty=dialog.repeat_penalty.value())
    for name, value in values.items():
        getattr(dialog, name).setValue(value)
    dialog.accept()
    return seen


def test_settings_dialog_offers_min_p_and_repeat_penalty_and_the_reply_uses_them(qtbot, store_path, starter_model):
    window = open_window(qtbot, store_path, starter_model, ConversationSettings(temperature=0.0, max_tokens=16, n_ctx=N_CTX, seed=1))
    try:
        window.chat.new_conversation()
        defaults = edit_settings(qtbot, window, min_p=0.2, repeat_penalty=1.8)
        assert defaults == {"min_p": 0.05, "repeat_penalty": 1.1}  # LM Studio's defaults
        settings = window.chat.settings()
        assert (settings.min_p, settings.repeat_penalty) == (0.2, 1.8)
        assert window.store.conversation(window.chat.current.id).settings["repeat_penalty"] == 1.8
        window.chat.send("Say la la la la la la la la")
        sent = window.chat.reply.call.params
        assert (sent.min_p, sent.repeat_penalty) == (0.2, 1.8)
        wait_reply(qtbot, window)
        penalised = window.chat.messages.messages[-1].content
        window.chat.new_conversation()
        edit_settings(qtbot, window, repeat_penalty=1.0)
        window.chat.send("Say la la la la la la la la")
        wait_reply(qtbot, window)
        assert window.chat.messages.messages[-1].content != penalised  # the runtime applied the penalty
    finally:
        window.shutdown()


def test_a_failed_chat_template_is_said_in_the_model_status_and_under_each_reply(qtbot, store_path, starter_model, tmp_path):
    broken = with_chat_template(starter_model, tmp_path / "broken-template.gguf", "{{ messages | no_such_filter }}")
    window = open_window(qtbot, store_path, broken)
    try:
        assert template_fallback_note() in window.model_label.text()
        assert "no_such_filter" in window.model_label.toolTip()
        window.chat.send("Hi")
        wait_reply(qtbot, window)
        footer = window.chat_view.widgets[-1].footer
        assert template_fallback_note() in footer.text() and "no_such_filter" in footer.toolTip()
    finally:
        window.shutdown()
