"""Model ▸ Draft model through the real window and runtime: the models on disk that can draft for the one
loaded, the others greyed out with the reason; a choice is stored, loads the draft with the target, and
the metrics panel shows the draft model's figures."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from app.chat.controller import ConversationSettings
from app.metrics import figures
from gguf_files import TINY_VOCABULARY, tokenizer_metadata, twin_of, write_llama
from runtime.models import load_settings
from window_helpers import open_window, wait_loaded, wait_reply

pytestmark = pytest.mark.slow


@pytest.fixture
def models_on_disk(tmp_path, monkeypatch, starter_model):
    """A models folder with a loadable twin of the starter model and a model with another tokenizer."""
    folder = tmp_path / "models"
    folder.mkdir()
    twin = twin_of(starter_model, folder / "starter-twin.gguf")
    stranger = write_llama(folder / "stranger-q4_k_m.gguf", name="Stranger", block_count=2, embedding=128, tokenizer=tokenizer_metadata(TINY_VOCABULARY))
    monkeypatch.setenv("LOKAL_MODELS_DIR", str(folder))
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("LOKAL_DATA_DIR", str(tmp_path / "data"))  # no files other tests added: these are all the models on disk
    return twin, stranger


def draft_entries(window) -> dict[str, object]:
    window.model_menu.rebuild()
    return {action.text(): action for action in window.local_sections.draft_menu.actions() if not action.isSeparator()}


def test_the_draft_model_menu_loads_a_compatible_model_with_the_target_and_greys_out_the_rest(qtbot, store_path, starter_model, models_on_disk, english, monkeypatch):
    twin, stranger = models_on_disk
    # A twin as big as the target never pays, and the runtime times the draft model at load to know it: make it
    # draft all the same, so the reply shows the draft model at work.
    monkeypatch.setenv("LOKAL_SPECULATIVE_FIXED_K", "4")
    window = open_window(qtbot, store_path, starter_model, settings=ConversationSettings(temperature=0.0, max_tokens=48, n_ctx=2048, seed=1))
    try:
        qtbot.waitUntil(lambda: window.loader.prepared is not None and len(window.loader.prepared.drafts) == 2 and not window.session.busy, timeout=60_000)
        entries = draft_entries(window)
        assert entries["Auto (none on disk)"].isChecked(), "the twin is as big as the target: auto never picks a draft that cannot pay"
        assert entries["None"].isEnabled() and entries[twin.name].isEnabled()
        (greyed,) = [a for text, a in entries.items() if text.startswith(stranger.name)]
        assert not greyed.isEnabled() and "vocabularies differ" in greyed.toolTip() and "cannot draft" in greyed.text()
        assert window.session.loaded.draft_path is None

        entries[twin.name].trigger()  # stored, then the window asks before it reloads
        qtbot.waitUntil(lambda: isinstance(window.local_sections.reload_question, QMessageBox) and window.local_sections.reload_question.isVisible(), timeout=5_000)
        assert load_settings.read_for(starter_model).draft == str(twin)
        reload_button = next(b for b in window.local_sections.reload_question.buttons() if b.text() == "Reload now")
        reload_button.click()
        qtbot.waitUntil(lambda: window.session.loaded.draft_path == str(twin) and not window.session.busy, timeout=90_000)
        assert draft_entries(window)[twin.name].isChecked()

        # The model's speculation setting goes with its replies (no reload: it applies per reply).
        window.local_sections.apply_load_settings(str(starter_model), load_settings.LoadSettings(draft=str(twin), speculation="draft"))
        assert not window.session.busy and window.session.speculation == "draft"
        window.chat.new_conversation()
        window.chat.send("Count from one to twenty in words.")
        wait_reply(qtbot, window)
        stats = window.chat.messages.messages[-1].record.stats
        assert stats.speculation == "draft" and stats.draft_tokens > 0
        assert window.metrics_panel.section_visible(figures.SPECULATION)
        assert window.metrics_panel.value_of("draft_model") == twin.name
    finally:
        window.shutdown()
