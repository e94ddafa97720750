"""Per-model load settings (runtime/models/load_settings.py): one file, read by the window, `lokal chat`
and `lokal serve` alike; a command-line flag overrides a stored value for its run only."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.chat.controller import ConversationSettings
from runtime.models import load_settings
from runtime.models.load_settings import LoadSettings, SettingsError
from serve_process import Served
from window_helpers import open_window

pytestmark = pytest.mark.slow

STORED = LoadSettings(n_ctx=3072, n_seq=2, n_threads=1, draft="none")


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    """A config folder of the test's own: the runtime processes and the window read the file there."""
    folder = tmp_path / "config"
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(folder))
    return folder


def chat_json(starter_model, *flags) -> dict:
    proc = subprocess.run([sys.executable, "-m", "app", "chat", "--model", str(starter_model), "--json", "--max-tokens", "2", "--temperature", "0", *flags, "Hi"],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[0])["model"]


def test_the_window_lokal_chat_and_lokal_serve_all_load_with_the_stored_settings(qtbot, config_dir, store_path, starter_model):
    load_settings.write(starter_model, STORED)
    stored_file = (config_dir / load_settings.FILE_NAME).read_text()

    loaded = chat_json(starter_model)
    assert (loaded["n_ctx"], loaded["n_seq"], loaded["draft_path"]) == (3072, 2, None)
    flagged = chat_json(starter_model, "--n-ctx", "2048")
    assert (flagged["n_ctx"], flagged["n_seq"]) == (2048, 2), "a flag replaces the stored value, the others stay"
    assert (config_dir / load_settings.FILE_NAME).read_text() == stored_file, "a flag is for its run only"

    served = Served("--model", str(starter_model), n_ctx=None)
    try:
        ready = served.wait_event("state", 120, state="ready")
        assert (ready["loaded"]["n_ctx"], ready["loaded"]["n_seq"]) == (3072, 2)
    finally:
        assert served.close() == 0

    # The window: a conversation that sets no context of its own gets the model's.
    window = open_window(qtbot, store_path, starter_model, settings=ConversationSettings(temperature=0.0, max_tokens=4, n_ctx=None))
    try:
        assert (window.session.loaded.n_ctx, window.session.loaded.n_seq) == (3072, 2)
        # One with its own context size keeps it possible: the model reloads with it.
        window.chat.new_conversation()
        window.chat.set_settings("", ConversationSettings(temperature=0.0, max_tokens=4, n_ctx=2048))
        window.session.ensure_context(window.chat.settings().n_ctx)
        qtbot.waitUntil(lambda: window.session.loaded.n_ctx == 2048 and not window.session.busy, timeout=90_000)
        assert window.session.loaded.n_seq == 2
    finally:
        window.shutdown()


def test_a_stored_value_that_cannot_be_used_is_an_error_naming_the_model_and_field(qtbot, config_dir, store_path, starter_model):
    load_settings.write(starter_model, LoadSettings())
    path = config_dir / load_settings.FILE_NAME
    data = json.loads(path.read_text())
    (identity,) = data["models"]
    data["models"][identity]["n_seq"] = "many"
    path.write_text(json.dumps(data))
    with pytest.raises(SettingsError, match=rf"models\.{identity}\.n_seq: 'many' is not a whole number"):
        load_settings.read_for(starter_model)
    proc = subprocess.run([sys.executable, "-m", "app", "chat", "--model", str(starter_model), "Hi"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "n_seq" in proc.stderr and proc.stdout == ""
    # The window says it, naming the field, and keeps working (no load is sent with settings it cannot use).
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        window.load_model(str(starter_model))
        qtbot.waitUntil(lambda: window.banner.isVisible() and not window.session.busy, timeout=30_000)
        assert "n_seq: 'many'" in window.banner_text.text() and starter_model.name in window.banner_text.text()
        assert window.session.wanted is None
    finally:
        window.shutdown()
    assert json.loads(path.read_text())["models"][identity]["n_seq"] == "many", "nothing the user set is rewritten"
    with pytest.raises(SettingsError, match="gpu_offload: 'lots'"):
        load_settings.write(starter_model, LoadSettings(gpu_offload="lots"))


def test_the_offload_words_map_to_layer_counts_in_one_place():
    assert [load_settings.offload_layers(w) for w in ("auto", "all", "off", "12")] == [None, -1, 0, 12]
    from app.cli.offload import gpu_layers  # the command line's --n-gpu-layers gives the stored words

    assert [load_settings.offload_layers(gpu_layers(w)) for w in ("auto", "ALL", "off", "-1", "0", "12")] == [None, -1, 0, -1, 0, 12]


def test_a_conversation_context_too_large_for_memory_is_said_before_the_reload(qtbot, config_dir, store_path, starter_model, monkeypatch):
    from runtime.gguf.reader import read_file_header
    from runtime.llama import memory

    # The window's fit sees a machine where the starter model's trained context (8,192) just does not fit; the runtime loads on this one.
    short = memory.estimate_load(read_file_header(starter_model), 8192, "f16", "f16", flash_attn=True).ram_peak - 1
    monkeypatch.setattr(memory, "available_ram", lambda: short)
    window = open_window(qtbot, store_path, starter_model)
    try:
        events = []
        window.loader.sig_context_capped.connect(lambda wanted, fits: events.append(("told", wanted, fits)))
        window.session.sig_loading.connect(lambda _path: events.append(("loading",)))
        window.session.sig_failed.connect(lambda _path, why: events.append(("failed", why)))
        window.chat.new_conversation()
        window.chat.set_settings("", ConversationSettings(temperature=0.0, max_tokens=4, n_ctx=8192))  # what the dialog's OK does
        qtbot.waitUntil(lambda: not window.session.busy and window.session.loaded is not None and window.session.loaded.n_ctx != 8192, timeout=90_000)
        told = ("told", 8192, window.session.loaded.n_ctx)
        assert events[:2] == [told, ("loading",)], events
        assert window.session.loaded.n_ctx == 4096, "the model's own default where its trained context does not fit: the floor"
        assert window.banner.isVisible() and "does not fit" in window.banner_text.text()
        assert not any(e[0] == "failed" for e in events)
    finally:
        window.shutdown()


def test_a_change_that_needs_a_reload_asks_and_never_cuts_a_running_reply_off(qtbot, config_dir, store_path, starter_model):
    from PySide6.QtWidgets import QMessageBox

    from app.storage import store as st

    window = open_window(qtbot, store_path, starter_model, settings=ConversationSettings(temperature=0.8, max_tokens=40, n_ctx=2048, seed=3))
    try:
        window.chat.new_conversation()
        window.chat.send("Write a very long essay about the sea.")
        qtbot.waitUntil(lambda: bool(window.chat.reply is not None and window.chat.reply.text), timeout=60_000)
        window.local_sections.apply_load_settings(str(starter_model), LoadSettings(n_seq=3))
        question = window.local_sections.reload_question
        assert isinstance(question, QMessageBox) and question.isVisible() and "none is cut off" in question.informativeText()
        assert load_settings.read_for(starter_model).n_seq == 3, "stored at once; applied at the reload"
        assert window.session.loaded.n_seq == 4 and window.chat.generating, "nothing reloads before the user says so"
        next(b for b in question.buttons() if b.text() == "Reload now").click()
        qtbot.waitUntil(lambda: window.session.loaded.n_seq == 3 and not window.session.busy, timeout=240_000)
        reply = window.store.messages(window.chat.current.id)[-1]
        assert reply.state == st.COMPLETE and reply.record.finish_reason in ("stop", "length"), "the reply ran to its end"
    finally:
        window.shutdown()


def test_a_new_conversation_samples_as_the_model_file_recommends(qtbot, config_dir, store_path, starter_model, tmp_path):
    from app.models.loader import prepare
    from gguf_files import write_gguf

    window = open_window(qtbot, store_path, starter_model)
    try:
        assert window.chat.new_conversation() and window.chat.settings().temperature == window.chat.default_settings.temperature  # the starter says nothing
        recommends = write_gguf(tmp_path / "recommends.gguf", metadata={"general.architecture": "llama", "llama.block_count": 1,
                                                                        "general.sampling.temp": 0.25, "general.sampling.top_p": 0.5}, tensor_elements=10)
        window.loader.sig_prepared.emit(prepare(str(recommends), None, [], []))  # as a load of that file works it out
        window.chat.new_conversation()
        settings = window.chat.settings()
        assert (settings.temperature, settings.top_p) == (0.25, 0.5)
        assert (settings.max_tokens, settings.min_p) == (window.chat.default_settings.max_tokens, window.chat.default_settings.min_p)
    finally:
        window.shutdown()
