"""A context longer than the model was trained for (its GGUF's context_length) is not loaded: past it a model's replies
fall apart, and Lokal sets no RoPE scaling that would stretch it. The load takes the trained context and the window says so,
whether the conversation or the model's load settings asked for more (app/models/loader.py)."""

from __future__ import annotations

import pytest

from app.chat.controller import ConversationSettings
from app.models.loader import prepare
from runtime.gguf.reader import read_file_header
from runtime.models import load_settings
from runtime.models.load_settings import LoadSettings
from window_helpers import open_window

TRAINED = 8192  # SmolLM2-135M's


def test_the_starter_model_says_what_it_was_trained_for(starter_model):
    assert read_file_header(starter_model).context_length == TRAINED


def test_a_conversation_asking_more_than_the_trained_context_gets_the_trained_one(starter_model, tmp_path, monkeypatch):
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))
    more = prepare(str(starter_model), 32_768, [], [])
    assert (more.choice.n_ctx, more.beyond_training, more.capped_from) == (TRAINED, 32_768, None)
    within = prepare(str(starter_model), 4096, [], [])
    assert (within.choice.n_ctx, within.beyond_training) == (4096, None)
    # The load settings asking for more: the same, unless the conversation's own context (within it) is what loads.
    load_settings.write(starter_model, LoadSettings(n_ctx=16_384))
    stored = prepare(str(starter_model), None, [], [])
    assert (stored.choice.n_ctx, stored.choice.model_n_ctx, stored.beyond_training) == (TRAINED, TRAINED, 16_384)
    assert prepare(str(starter_model), 2048, [], []).beyond_training is None


@pytest.mark.slow
def test_the_window_loads_the_trained_context_and_says_why(qtbot, store_path, starter_model, tmp_path, monkeypatch, english):
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))
    window = open_window(qtbot, store_path, starter_model)
    try:
        events = []
        window.loader.sig_context_beyond_training.connect(lambda asked, trained: events.append(("beyond", asked, trained)))
        window.loader.sig_context_capped.connect(lambda wanted, fits: events.append(("told", wanted, fits)))
        window.session.sig_loading.connect(lambda _path: events.append(("loading",)))
        window.chat.new_conversation()
        window.chat.set_settings("", ConversationSettings(temperature=0.0, max_tokens=4, n_ctx=50_000_000))  # what the dialog's OK does
        qtbot.waitUntil(lambda: not window.session.busy and window.session.loaded is not None and window.session.loaded.n_ctx == TRAINED, timeout=90_000)
        assert events[:2] == [("beyond", 50_000_000, TRAINED), ("loading",)], events
        assert window.banner.isVisible()
        assert window.banner_text.text().startswith("The model was trained for a context of 8,192 tokens, and its replies fall apart past that")
        assert "not the 50,000,000 asked for" in window.banner_text.text()
    finally:
        window.shutdown()


@pytest.mark.slow
def test_load_settings_offer_no_context_past_the_trained_one(qtbot, store_path, starter_model, tmp_path, monkeypatch, english):
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))
    load_settings.write(starter_model, LoadSettings(n_ctx=16_384))  # stored before this check existed
    window = open_window(qtbot, store_path, starter_model)
    try:
        dialog = window.local_sections.open_load_settings()
        qtbot.addWidget(dialog)
        assert dialog.n_ctx.maximum() == TRAINED and dialog.n_ctx.value() == TRAINED
        assert "trained for 8,192 tokens" in dialog.n_ctx.toolTip()
        dialog.n_ctx.setValue(100_000)
        assert dialog.n_ctx.value() == TRAINED and dialog.result_settings().n_ctx == TRAINED
    finally:
        window.shutdown()
