"""A model downloaded with its draft model, through the real window, its runtime and the loopback hub: the
browser offers it for a repository with a compatible draft partner, both download (one progress entry each),
the pair is stored as the model's draft, Model ▸ Draft model shows it, loading the model loads the draft, and
the metrics panel shows the draft model's figures beside prompt lookup's. The speculation mode is the
model's setting unless the conversation sets its own."""

from __future__ import annotations

import os
import re

import pytest

from app.chat.controller import ConversationSettings
from app.metrics import figures
from app.runtime_link.link import ConnectionState
from fake_hub import FakeFile, FakeRepo
from gguf_files import twin_of
from runtime.models import load_settings
from runtime.models.load_settings import LoadSettings
from sample_repos import SMOL_FILE, SMOL_REPO
from window_helpers import open_window, wait_loaded, wait_reply

pytestmark = pytest.mark.slow

TWIN_REPO = "lokal-test/SmolLM2-135M-Twin-GGUF"
TWIN_FILE = "SmolLM2-135M-Instruct-Twin-Q4_1.gguf"
DOWNLOADS_MS = 120_000


@pytest.fixture
def twin_on_the_hub(hub, starter_model, tmp_path, monkeypatch):
    """The starter model's repository gets a draft partner that really loads: a twin (same tokenizer, another file)."""
    twin = twin_of(starter_model, tmp_path / TWIN_FILE)
    hub.repos[TWIN_REPO] = FakeRepo(files={TWIN_FILE: FakeFile(source=twin)}, downloads=5)
    models = tmp_path / "models"
    models.mkdir()
    monkeypatch.setenv("LOKAL_MODELS_DIR", str(models))  # only the downloads are on disk
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))
    return twin


def downloads_of(window):
    return window.catalog.dock.widget().model


def test_download_with_its_draft_model_pairs_them_and_the_window_loads_and_shows_both(qtbot, hub, twin_on_the_hub, store_path, starter_model, english, monkeypatch):
    # A twin as big as the target never pays, and the runtime times the draft model at load to know it: make it
    # draft all the same (LOKAL_SPECULATIVE_FIXED_K, read by the runtime at load), so its figures reach the panel.
    monkeypatch.setenv("LOKAL_SPECULATIVE_FIXED_K", "4")
    # The model's own settings, set before: pairing changes only its draft.
    load_settings.write(starter_model, LoadSettings(speculation="lookup", n_seq=2, n_ctx=2048))
    window = open_window(qtbot, store_path, starter_model, settings=ConversationSettings(temperature=0.0, max_tokens=32, n_ctx=None, seed=1), load=False)
    try:
        qtbot.waitUntil(lambda: window.link.state == ConnectionState.READY, timeout=60_000)
        browser = window.catalog.open_browser()
        browser.show_repo(SMOL_REPO, draft=TWIN_REPO)
        qtbot.waitUntil(lambda: browser.download_with_draft_button.isVisible() and browser.levels.rowCount() == 3 and browser.download_with_draft_button.isEnabled(), timeout=60_000)
        assert "compatible" in browser.draft_label.text()
        level = browser.levels.row(browser.level_view.currentIndex().row())
        assert level.name == "Q4_1" and "with the draft model" in level.fit.detail  # the fit counts both

        browser.download_with_draft_button.click()
        qtbot.waitUntil(lambda: window.catalog.dock is not None and downloads_of(window).rowCount() == 2
                        and all(downloads_of(window).row(r).state == "done" for r in range(2)), timeout=DOWNLOADS_MS)
        assert sorted(downloads_of(window).row(r).repo for r in range(2)) == sorted([SMOL_REPO, TWIN_REPO]), "one progress entry each"
        qtbot.waitUntil(lambda: "will load with its draft model" in browser.status.text(), timeout=DOWNLOADS_MS)
        target = next(p for r in range(2) for p in downloads_of(window).row(r).paths if p.endswith(SMOL_FILE))
        draft = next(p for r in range(2) for p in downloads_of(window).row(r).paths if p.endswith(TWIN_FILE))
        stored = load_settings.read_for(target)
        assert (stored.draft, stored.speculation, stored.n_seq, stored.n_ctx) == (draft, "lookup", 2, 2048)
        assert f"{SMOL_FILE} will load with its draft model {TWIN_FILE}" in browser.status.text()

        # Loading the model loads its draft; Model ▸ Draft model shows the pair.
        qtbot.waitUntil(lambda: any(f.path == draft for f in window.local_models.files), timeout=30_000)
        window.load_model(target)
        qtbot.waitUntil(lambda: window.session.loaded is not None and window.session.loaded.draft_path == draft, timeout=90_000)
        wait_loaded(qtbot, window)
        window.model_menu.rebuild()
        entries = {a.text(): a for a in window.local_sections.draft_menu.actions() if not a.isSeparator()}
        assert entries[TWIN_FILE].isChecked() and entries[TWIN_FILE].isEnabled()

        # The model's speculation setting (lookup) for a conversation that sets none...
        window.chat.new_conversation()
        window.chat.send("Count from one to twenty in words.")
        wait_reply(qtbot, window)
        stats = window.chat.messages.messages[-1].record.stats
        assert stats.speculation == "lookup" and stats.model_draft_tokens == 0

        # ...and the conversation's own (draft model), with the draft model's figures in the panel.
        window.chat.new_conversation()
        window.chat.set_settings("", ConversationSettings(temperature=0.0, max_tokens=32, n_ctx=None, seed=1, speculation="draft"))
        window.chat.send("Count from one to twenty in words.")
        wait_reply(qtbot, window)
        stats = window.chat.messages.messages[-1].record.stats
        assert stats.speculation == "draft" and stats.model_draft_tokens > 0 and stats.lookup_draft_tokens == 0
        panel = window.metrics_panel
        assert panel.section_visible(figures.SPECULATION)
        assert panel.value_of("draft_model") == os.path.basename(draft)
        expected = f"{stats.model_draft_tokens_accepted} of {stats.model_draft_tokens} ("
        assert panel.value_of("by_model").startswith(expected) and re.search(r"\(\d+ %\)$", panel.value_of("by_model"))
        assert panel.label_of("by_model") == "By the draft model" and panel.value_of("by_lookup") is None
    finally:
        window.shutdown()


def test_a_pair_that_cannot_be_stored_is_said_naming_why(qtbot, tmp_path, monkeypatch, starter_model):
    """Both downloads are done and kept; only the pairing fails, and the browser's status line says why."""
    from PySide6.QtWidgets import QMainWindow

    from app.catalog.ui import CatalogUi
    from app.runtime_link.link import RuntimeLink

    config = tmp_path / "config"
    config.mkdir()
    (config / load_settings.FILE_NAME).write_text("{not json", encoding="utf-8")
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(config))
    window = QMainWindow()
    qtbot.addWidget(window)
    ui = CatalogUi(RuntimeLink(auto_restart=False), window)  # never started: pairing asks nothing of the runtime
    twin = twin_of(starter_model, tmp_path / TWIN_FILE)
    for target, said in (([str(starter_model)], f"{load_settings.FILE_NAME}: cannot be read as settings"),
                         ([str(tmp_path / "README.md")], "no GGUF file among README.md")):
        with qtbot.waitSignal(ui.service.sig_error, timeout=5_000) as error, qtbot.assertNotEmitted(ui.sig_paired):
            ui.service.sig_pair_downloaded.emit(target, [str(twin)])
        assert error.args[0] == "Pairing the model with its draft" and said in error.args[1], error.args
    assert (config / load_settings.FILE_NAME).read_text(encoding="utf-8") == "{not json", "nothing the user set is rewritten"


def test_the_conversation_settings_offer_the_models_speculation_mode_or_one_of_its_own(qtbot, english):
    from app.chat.widgets.settings_dialog import ConversationSettingsDialog

    dialog = ConversationSettingsDialog("", ConversationSettings())
    qtbot.addWidget(dialog)
    assert dialog.speculation.currentText() == "The model's setting" and dialog.result_settings()[1].speculation is None
    dialog.speculation.setCurrentIndex(dialog.speculation.findData("draft"))
    assert dialog.result_settings()[1].speculation == "draft"
    again = ConversationSettingsDialog("", ConversationSettings(speculation="off"))
    qtbot.addWidget(again)
    assert again.speculation.currentData() == "off"
    assert ConversationSettings.from_dict(ConversationSettings(speculation="lookup").to_dict()).speculation == "lookup"  # stored with the conversation
