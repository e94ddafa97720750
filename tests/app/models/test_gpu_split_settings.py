"""A second GPU: split_mode and main_gpu in the per-model load settings, llama.cpp's defaults, passed to the
load; `lokal chat/serve --split-mode/--main-gpu`; a bad value of each kind refused by name; the Load settings
dialog offers them only where there is more than one GPU device."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from app.models.load_settings_dialog import LoadSettingsDialog
from runtime.gguf.reader import read_file_header
from runtime.models import load_settings
from runtime.models.load_settings import LoadSettings, SettingsError
from runtime.protocol import ErrorCode, ModelLoadParams, RpcError


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(folder))
    return folder


@pytest.mark.slow
def test_the_defaults_are_llama_cpps_and_a_load_carries_them_to_llama_cpp(config_dir, starter_model):
    import llama_cpp

    from runtime.llama.llama_model import SPLIT_MODES, LlamaModel
    from runtime.llama.llama_model import LoadSettings as EngineSettings

    llama_defaults = llama_cpp.llama_model_default_params()
    assert SPLIT_MODES[LoadSettings().split_mode] == llama_defaults.split_mode and LoadSettings().main_gpu == llama_defaults.main_gpu
    assert (ModelLoadParams("m").split_mode, ModelLoadParams("m").main_gpu) == (LoadSettings().split_mode, LoadSettings().main_gpu)

    # Stored, read back, and in the load request; a flag replaces the stored value for that load only.
    load_settings.write(starter_model, LoadSettings(split_mode="row", main_gpu=1))
    stored = load_settings.read_for(starter_model)
    header = read_file_header(starter_model)
    params = load_settings.load_params(str(starter_model), stored, header=header, n_ctx=512)
    assert (params.split_mode, params.main_gpu) == ("row", 1)
    flagged = load_settings.load_params(str(starter_model), stored, header=header, n_ctx=512, split_mode="none", main_gpu=0)
    assert (flagged.split_mode, flagged.main_gpu) == ("none", 0)
    assert load_settings.read_for(starter_model).split_mode == "row"
    # The window's load (app/models/loader.py works it out from the stored settings) carries them too.
    from app.models.loader import prepare

    window_load = prepare(str(starter_model), None, [(str(starter_model), starter_model.stat().st_size)], []).choice.params()
    assert (window_load.split_mode, window_load.main_gpu) == ("row", 1)

    # What the runtime's engine hands llama.cpp (on this machine's CPU, a split over GPU devices changes nothing).
    settings = EngineSettings(path=str(starter_model), n_ctx=256, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=1,
                              split_mode="none", main_gpu=0)
    model = LlamaModel(settings, header)
    try:
        assert (model._model.params.split_mode, model._model.params.main_gpu) == (llama_cpp.LLAMA_SPLIT_MODE_NONE, 0)
    finally:
        model.close()


def test_a_bad_stored_value_of_each_kind_is_refused_naming_the_model_and_field(config_dir, starter_model):
    load_settings.write(starter_model, LoadSettings())
    path = config_dir / load_settings.FILE_NAME
    data = json.loads(path.read_text())
    (identity,) = data["models"]
    for field, value, said in (("split_mode", "rows", "'rows' is not one of none, layer, row"), ("main_gpu", -1, "-1 is not a GPU device's index"),
                               ("main_gpu", "first", "'first' is not a GPU device's index")):
        data["models"][identity] = {**data["models"][identity], "split_mode": "layer", "main_gpu": 0, field: value}
        path.write_text(json.dumps(data))
        with pytest.raises(SettingsError, match=rf"models\.{identity}\.{field}: {said}"):
            load_settings.read_for(starter_model)
    with pytest.raises(SettingsError, match="split_mode: 'tensors'"):
        load_settings.write(starter_model, dataclasses.replace(LoadSettings(), split_mode="tensors"))  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("flags, said", [(["--split-mode", "rows"], "override.split_mode: 'rows' is not one of none, layer, row"),
                                         (["--main-gpu", "-1"], "override.main_gpu: -1 is not a GPU device's index")])
def test_a_bad_flag_is_refused_by_lokal_chat_and_lokal_serve_naming_it(config_dir, starter_model, flags, said):
    for command in (["chat", "--model", str(starter_model), *flags, "Hi"], ["serve", "--model", str(starter_model), "--port", "0", *flags]):
        proc = subprocess.run([sys.executable, "-m", "app", *command], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1 and said in proc.stderr, (command, proc.stderr)


@pytest.mark.slow
def test_the_runtime_refuses_a_main_gpu_that_is_not_here_and_a_split_mode_it_does_not_know(runtime, starter_model):
    with pytest.raises(RpcError) as err:
        runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256, main_gpu=2))
    assert err.value.code == ErrorCode.INVALID_PARAMS and "params.main_gpu: 2 is not a GPU device's index here (GPU devices: none)" in err.value.message
    with pytest.raises(RpcError) as err:
        runtime.request_unchecked("model.load", {"path": str(starter_model), "split_mode": "rows"}, timeout=60)
    assert err.value.code == ErrorCode.INVALID_PARAMS and "params.split_mode" in err.value.message
    info = runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256, split_mode="none", main_gpu=0))  # still serving
    assert info.n_ctx == 256


def test_the_dialog_offers_the_split_only_with_several_gpu_devices(qtbot):
    stored = LoadSettings(split_mode="row", main_gpu=1)
    several = LoadSettingsDialog("m.gguf", stored, 4096, [], True, None, gpu_names=["GPU A", "GPU B"])
    qtbot.addWidget(several)
    assert several.split_mode.isVisibleTo(several) and several.main_gpu.isVisibleTo(several) and not several.split_note.isVisibleTo(several)
    assert (several.split_mode.currentData(), several.main_gpu.currentText()) == ("row", "1: GPU B")
    several.split_mode.setCurrentIndex(several.split_mode.findData("none"))
    several.main_gpu.setCurrentIndex(0)
    assert (several.result_settings().split_mode, several.result_settings().main_gpu) == ("none", 0)

    for names in ([], ["GPU A"]):
        one = LoadSettingsDialog("m.gguf", stored, 4096, [], bool(names), None, gpu_names=names)
        qtbot.addWidget(one)
        assert not one.split_mode.isVisibleTo(one) and one.split_note.isVisibleTo(one)
        assert f"this machine has {len(names)}" in one.split_note.text()
        kept = one.result_settings()
        assert (kept.split_mode, kept.main_gpu) == ("row", 1), "a hidden setting keeps its stored value"


def test_automatic_threads_says_how_many_the_runtime_will_start(qtbot, english, every_core):
    """The runtime starts a thread per core it may run on, and inherits the window's cores (runtime/cores.py)."""
    cores = sorted(every_core)
    for allowed, text in ((cores[:1], "Automatic (1 thread, one per core)"), (cores[:2], "Automatic (2 threads, one per core)")):
        os.sched_setaffinity(0, allowed)
        dialog = LoadSettingsDialog("m.gguf", LoadSettings(), 4096, [], False, None)
        qtbot.addWidget(dialog)
        assert dialog.threads.value() == 0 and dialog.threads.text() == text
        assert dialog.result_settings().n_threads is None, "automatic stays the runtime's choice"
