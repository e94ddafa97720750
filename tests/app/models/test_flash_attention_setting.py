"""Flash attention as a per-model load setting: Auto (None, the runtime's choice), On or Off, stored with the
others (an older file without it reads as Auto), carried into the window's load and `lokal chat/serve`'s,
a change of it reloads; `--flash-attn auto|on|off` replaces it for one run; a bad stored value, and Off with a
quantized V cache (which cannot load), are refused by name; the Load settings dialog offers neither Off with a
quantized KV cache nor a quantized KV cache with Off."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout

from app.models.load_settings_dialog import LoadSettingsDialog
from app.models.loader import needs_reload, prepare
from runtime.gguf.reader import read_file_header
from runtime.llama.memory import estimate_load
from runtime.models import load_settings
from runtime.models.load_settings import LoadSettings, SettingsError
from serve_process import Served


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(folder))
    return folder


def stored_entry(config_dir) -> tuple[dict, str]:
    data = json.loads((config_dir / load_settings.FILE_NAME).read_text())
    (identity,) = data["models"]
    return data, identity


def test_stored_read_back_and_carried_into_the_load_and_a_change_reloads(config_dir, starter_model):
    assert LoadSettings().flash_attn is None
    load_settings.write(starter_model, LoadSettings(flash_attn=True))
    stored = load_settings.read_for(starter_model)
    assert stored.flash_attn is True
    header = read_file_header(starter_model)
    assert load_settings.load_params(str(starter_model), stored, header=header, n_ctx=512).flash_attn is True
    stored_file = (config_dir / load_settings.FILE_NAME).read_text()
    assert load_settings.load_params(str(starter_model), stored, header=header, n_ctx=512, flash_attn=False).flash_attn is False
    assert (config_dir / load_settings.FILE_NAME).read_text() == stored_file, "an override is for its load only"

    window_load = prepare(str(starter_model), None, [(str(starter_model), starter_model.stat().st_size)], []).choice
    assert window_load.flash_attn is True and window_load.params().flash_attn is True
    assert needs_reload(LoadSettings(), LoadSettings(flash_attn=False)) == ["flash_attn"]
    assert needs_reload(LoadSettings(flash_attn=True), LoadSettings(flash_attn=None)) == ["flash_attn"]

    # lokal chat/serve's load: --flash-attn's word, or a preset's stored value (app/presets/serving.py), in place of the stored one.
    from app.cli.load_settings import stored_load

    assert stored_load(str(starter_model), draft="none", n_ctx=512)[0].flash_attn is True
    flagged, settings = stored_load(str(starter_model), draft="none", n_ctx=512, flash_attn="auto")
    assert flagged.flash_attn is None and settings.flash_attn is True, "auto replaces the stored On; the settings are still the stored ones"
    assert stored_load(str(starter_model), draft="none", n_ctx=512, flash_attn="off")[0].flash_attn is False
    assert stored_load(str(starter_model), draft="none", n_ctx=512, flash_attn=False)[0].flash_attn is False

    # A file written before the setting existed: Auto.
    data, identity = stored_entry(config_dir)
    del data["models"][identity]["flash_attn"]
    (config_dir / load_settings.FILE_NAME).write_text(json.dumps(data))
    assert load_settings.read_for(starter_model).flash_attn is None


def test_the_default_context_counts_the_attention_scores_flash_attention_off_keeps(starter_model):
    header = read_file_header(starter_model)
    trained = header.context_length
    ram = estimate_load(header, trained, flash_attn=False).ram_peak - 1  # the trained context fits with flash attention only
    assert load_settings.default_context(header, ram_available=ram) == trained
    assert load_settings.default_context(header, ram_available=ram, flash_attn=True) == trained
    assert load_settings.default_context(header, ram_available=ram, flash_attn=False) < trained


def test_a_bad_stored_value_and_off_with_a_quantized_v_cache_are_refused_naming_the_field(config_dir, starter_model):
    load_settings.write(starter_model, LoadSettings())
    path = config_dir / load_settings.FILE_NAME
    data, identity = stored_entry(config_dir)
    for value, said in (("yes", "'yes' is not true (on), false (off) or null (auto)"), (1, "1 is not true (on), false (off) or null (auto)"),
                        ("auto", "'auto' is not true")):
        data["models"][identity]["flash_attn"] = value
        path.write_text(json.dumps(data))
        with pytest.raises(SettingsError, match=rf"models\.{identity}\.flash_attn: {re.escape(said)}"):
            load_settings.read_for(starter_model)
    data["models"][identity].update(flash_attn=False, type_k="q8_0", type_v="q8_0")
    path.write_text(json.dumps(data))
    with pytest.raises(SettingsError, match=rf"models\.{identity}\.flash_attn: off cannot go with a quantized V cache \(type_v q8_0\)"):
        load_settings.read_for(starter_model)

    with pytest.raises(SettingsError, match="flash_attn: off cannot go with a quantized V cache"):
        load_settings.write(starter_model, LoadSettings(type_v="q4_0", flash_attn=False))
    quantized = LoadSettings(type_k="q8_0", type_v="q8_0")
    with pytest.raises(SettingsError, match=r"override\.flash_attn: off cannot go with a quantized V cache"):
        load_settings.load_params(str(starter_model), quantized, n_ctx=512, flash_attn=False)
    assert load_settings.load_params(str(starter_model), quantized, n_ctx=512, flash_attn=True).flash_attn is True


def test_the_dialog_offers_auto_on_and_off_but_never_off_with_a_quantized_kv_cache(qtbot):
    dialog = LoadSettingsDialog("m.gguf", LoadSettings(), 4096, [], False)
    qtbot.addWidget(dialog)
    flash, kv = dialog.flash_attn, dialog.kv_type
    assert [flash.itemText(i) for i in range(flash.count())] == ["Auto", "On", "Off"] and flash.currentText() == "Auto"
    assert flash.toolTip() == ("Auto: llama.cpp's choice, on. Off decodes faster on a CPU, "
                               "but a conversation restored from the KV store may then go on a little differently")
    form = dialog.findChild(QFormLayout)
    label = form.labelForField(flash)
    assert label is not None and label.text() == "Flash attention" and flash.accessibleName() == "Flash attention"
    assert form.getWidgetPosition(flash)[0] == form.getWidgetPosition(kv)[0] + 1, "beside the KV cache type it goes with"
    assert dialog.result_settings().flash_attn is None

    def enabled(combo, data) -> bool:
        return bool(combo.model().item(combo.findData(data)).flags() & Qt.ItemFlag.ItemIsEnabled)

    # A quantized KV cache: Off cannot be chosen, and says why.
    kv.setCurrentIndex(kv.findData("q8_0"))
    assert not enabled(flash, "off") and enabled(flash, "on") and enabled(flash, "auto")
    assert "needs flash attention" in flash.itemData(flash.findData("off"), Qt.ItemDataRole.ToolTipRole)
    settings = dialog.result_settings()
    assert (settings.type_v, settings.flash_attn) == ("q8_0", None)
    load_settings.check(settings)
    kv.setCurrentIndex(kv.findData("f16"))
    assert enabled(flash, "off") and not flash.itemData(flash.findData("off"), Qt.ItemDataRole.ToolTipRole)

    # Off: the quantized KV cache types cannot be chosen, and say why.
    flash.setCurrentIndex(flash.findData("off"))
    assert not enabled(kv, "q8_0") and not enabled(kv, "q4_0") and enabled(kv, "f16")
    assert "make it Auto or On first" in kv.itemData(kv.findData("q4_0"), Qt.ItemDataRole.ToolTipRole)
    assert dialog.result_settings().flash_attn is False
    flash.setCurrentIndex(flash.findData("on"))
    assert enabled(kv, "q8_0") and dialog.result_settings().flash_attn is True

    for stored, shown in ((True, "On"), (False, "Off")):
        again = LoadSettingsDialog("m.gguf", LoadSettings(flash_attn=stored), 4096, [], False)
        qtbot.addWidget(again)
        assert again.flash_attn.currentText() == shown and again.result_settings().flash_attn is stored
    quantized = LoadSettingsDialog("m.gguf", LoadSettings(type_k="q4_0", type_v="q4_0", flash_attn=True), 4096, [], False)
    qtbot.addWidget(quantized)
    assert not enabled(quantized.flash_attn, "off"), "a stored quantized cache turns Off off from the start"


def chat_json(starter_model, *flags) -> dict:
    proc = subprocess.run([sys.executable, "-m", "app", "chat", "--model", str(starter_model), "--json", "--max-tokens", "1", "--temperature", "0",
                           "--threads", "1", "--n-ctx", "512", *flags, "Hi"], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[0])["model"]


@pytest.mark.slow
def test_the_flag_replaces_the_stored_setting_for_its_run_and_the_load_result_says_which(config_dir, starter_model):
    load_settings.write(starter_model, LoadSettings(flash_attn=True, n_seq=1))
    stored_file = (config_dir / load_settings.FILE_NAME).read_text()
    assert chat_json(starter_model)["flash_attn"] is True, "the stored setting"
    # Auto: llama.cpp's choice, which the load result gives as null.
    assert chat_json(starter_model, "--flash-attn", "auto")["flash_attn"] is None
    assert (config_dir / load_settings.FILE_NAME).read_text() == stored_file, "a flag is for its run only"

    served = Served("--flash-attn", "off", "--n-threads", "1", model=str(starter_model), n_ctx=512)
    try:
        ready = served.wait_event("state", 120, state="ready")
        assert ready["loaded"]["flash_attn"] is False and ready["loaded"]["n_seq"] == 1
    finally:
        assert served.close() == 0


@pytest.mark.slow
def test_lokal_chat_and_lokal_serve_refuse_off_with_a_stored_quantized_cache_and_a_word_they_do_not_know(config_dir, starter_model):
    load_settings.write(starter_model, dataclasses.replace(LoadSettings(), type_k="q8_0", type_v="q8_0"))
    for command in (["chat", "--model", str(starter_model), "Hi"], ["serve", "--model", str(starter_model), "--port", "0"]):
        proc = subprocess.run([sys.executable, "-m", "app", *command, "--flash-attn", "off"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1 and "override.flash_attn: off cannot go with a quantized V cache (type_v q8_0)" in proc.stderr, (command, proc.stderr)
        proc = subprocess.run([sys.executable, "-m", "app", *command, "--flash-attn", "maybe"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and "--flash-attn: invalid choice: 'maybe'" in proc.stderr, (command, proc.stderr)
