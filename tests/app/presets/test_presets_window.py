"""Presets in the real window: Ctrl+Shift+N lists them and starts a chat from one, a chat's settings become a
preset, a preset's model loads with its load settings, and import/export go through the dialog."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from app.chat.controller import ConversationSettings
from app.presets.builtin import find_builtin
from app.presets.preset import Preset, Sampling
from runtime.models import load_settings
from runtime.models.load_settings import LoadSettings
from waiting import qt_wait_until
from window_helpers import open_window

pytestmark = pytest.mark.slow


def _action(window, sequence: str):
    return next(a for menu in window.menus.values() for a in menu.actions() if a.shortcut() == QKeySequence(sequence))


def test_ctrl_shift_n_lists_the_presets_and_starts_a_chat_with_the_chosen_ones_prompt_and_sampling(qtbot, store_path, starter_model):
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        feature = window.features["presets"]
        feature.service.store.save(Preset("Haiku poet", "Answer in haiku.", Sampling(temperature=1.2, top_p=0.8, max_tokens=64)))
        _action(window, "Ctrl+Shift+N").trigger()
        picker = feature.picker
        assert picker is not None and picker.isVisible()
        names = [p.name for p in picker.model.presets()]
        assert names[:len(names) - 1] == [p.name for p in feature.service.store.all()][:len(names) - 1] and "Haiku poet" in names
        assert find_builtin("code-reviewer").name in names

        before = len(window.chat.conversations._items)
        assert picker.select("Haiku poet")
        assert "Answer in haiku." in picker.detail.text()
        qtbot.keyClick(picker.list, Qt.Key.Key_Return)
        assert not picker.isVisible()
        conv = window.chat.current
        assert conv is not None and len(window.chat.conversations._items) == before + 1
        assert conv.system_prompt == "Answer in haiku."
        settings = window.chat.settings()
        assert (settings.temperature, settings.top_p, settings.max_tokens) == (1.2, 0.8, 64)
        assert settings.min_p == ConversationSettings().min_p  # what the preset leaves out keeps the new chat's default
    finally:
        window.shutdown()


def test_a_chats_settings_become_a_preset_and_a_built_in_name_is_refused(qtbot, store_path, starter_model):
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        window.chat.new_conversation()
        window.chat.set_settings("You review SQL.", ConversationSettings(temperature=0.1, top_p=0.5, max_tokens=300, seed=9))
        feature = window.features["presets"]
        dialog = feature.save_current()
        assert not dialog.with_model.isEnabled()  # no model is chosen in this window
        dialog.name.setText(find_builtin("translator").name)
        dialog.save()
        assert dialog.isVisible() and "built-in preset" in dialog.problem.text()
        dialog.name.setText("SQL reviewer")
        dialog.save()
        assert not dialog.isVisible()
        saved = feature.service.store.find("sql reviewer")
        assert saved == Preset("SQL reviewer", "You review SQL.", Sampling(0.1, 0.5, ConversationSettings().min_p, ConversationSettings().repeat_penalty, 300, 9))
    finally:
        window.shutdown()


def test_a_preset_with_a_model_loads_it_with_its_load_settings(qtbot, store_path, starter_model):
    # A new chat sets no context of its own (as in the app): the model's load settings, the preset's, decide it.
    window = open_window(qtbot, store_path, starter_model, settings=ConversationSettings(max_tokens=8, n_ctx=None), load=False)
    try:
        feature = window.features["presets"]
        preset = Preset("Tiny", "Be brief.", Sampling(temperature=0.0), str(starter_model), LoadSettings(n_ctx=1536, n_seq=2))
        feature.service.store.save(preset)
        picker = feature.pick()
        assert picker.select("Tiny")
        picker.start()
        assert load_settings.read_for(starter_model).n_ctx == 1536  # the model's load settings now
        qt_wait_until(lambda: window.session.loaded is not None and not window.session.busy, 90, "the preset's model loaded")
        assert window.session.loaded.path == str(starter_model) and window.session.loaded.n_ctx == 1536 and window.session.loaded.n_seq == 2
        assert window.chat.current.system_prompt == "Be brief."

        dialog = feature.save_current()
        assert dialog.with_model.isEnabled()  # now a model is in use: it may go with a preset
        dialog.name.setText("Tiny again")
        dialog.with_model.setChecked(True)
        dialog.save()
        again = feature.service.store.find("Tiny again")
        assert again.model == str(starter_model) and again.load_settings.n_ctx == 1536

        missing = Preset("Gone", model=str(starter_model) + ".moved")
        feature.service.store.save(missing)
        assert picker.select("Gone") is False  # the list is refreshed when the picker opens
        picker = feature.pick()
        assert picker.select("Gone")
        picker.start()
        assert "not on this machine" in window.statusBar().currentMessage()
    finally:
        window.shutdown()


def test_export_and_import_through_the_dialog_and_a_bad_file_is_said_in_it(qtbot, store_path, starter_model, tmp_path):
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        feature = window.features["presets"]
        feature.service.store.save(Preset("Mine", "Hello.", Sampling(temperature=0.3)))
        picker = feature.pick()
        out = tmp_path / "presets.json"
        assert picker.export_to(str(out))
        assert json.loads(out.read_text())["presets"] == [{"name": "Mine", "system_prompt": "Hello.", "sampling": {"temperature": 0.3}}]
        picker.select("Mine")
        picker.delete_current()
        assert feature.service.store.find("Mine") is None
        assert picker.import_from(str(out))
        assert feature.service.store.find("Mine") is not None and "Mine" in [p.name for p in picker.model.presets()]

        bad = tmp_path / "bad.json"
        bad.write_text('{"lokal_presets": 1, "presets": [{"name": "X", "sampling": {"top_p": 7}}]}')
        assert not picker.import_from(str(bad))
        assert "presets[0].sampling.top_p" in picker.problem.text() and "Nothing was imported" in picker.problem.text()
        assert feature.service.store.find("X") is None
    finally:
        window.shutdown()
