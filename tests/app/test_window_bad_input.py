"""Each kind of bad input the window meets gets a clear message, and the app keeps working."""

from __future__ import annotations

import sqlite3
import sys

import pytest

from app.storage import store as st
from gguf_files import write_gguf
from waiting import qt_wait_until
from window_helpers import wait_loaded, wait_reply

pytestmark = pytest.mark.slow


def chat_still_works(qtbot, window):
    window.chat.send("Say yes.")
    wait_reply(qtbot, window)
    reply = window.chat.messages.messages[-1]
    assert reply.state == st.COMPLETE and reply.content


def test_a_file_that_is_not_gguf_shows_the_error_and_keeps_the_model(qtbot, window, tmp_path, starter_model):
    bad = tmp_path / "notes.gguf"
    bad.write_text("this is not a model")
    window.load_model(str(bad))
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=30_000)
    assert "Could not load notes.gguf" in window.banner_text.text() and "not a usable GGUF" in window.banner_text.text()
    wait_loaded(qtbot, window)
    assert window.session.loaded.path == str(starter_model)
    chat_still_works(qtbot, window)


def test_a_missing_model_file_shows_the_error(qtbot, window, tmp_path):
    window.load_model(str(tmp_path / "gone.gguf"))
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=30_000)
    assert "model file not found" in window.banner_text.text()
    chat_still_works(qtbot, window)


def test_a_gguf_that_llama_cpp_cannot_load_falls_back_to_the_previous_model(qtbot, window, tmp_path, starter_model):
    broken = write_gguf(tmp_path / "broken.gguf", metadata={"general.architecture": "llama", "llama.block_count": 1, "general.file_type": 1}, tensor_elements=64, sparse=False)
    failures = []
    window.session.sig_failed.connect(lambda path, message: failures.append(message))
    window.load_model(str(broken))
    qtbot.waitUntil(lambda: bool(failures), timeout=60_000)
    assert "broken.gguf" in window.banner_text.text()
    wait_loaded(qtbot, window)
    assert window.session.loaded.path == str(starter_model)
    chat_still_works(qtbot, window)


def test_a_runtime_that_cannot_start_is_reported_without_a_restart_loop(qtbot, tmp_path):
    from PySide6.QtCore import QTimer

    from app.runtime_link import ConnectionState, RuntimeLink
    from app.runtime_link.link import RESTART_DELAY_MS
    from app.storage import Store
    from app.window import MainWindow

    link = RuntimeLink([str(tmp_path / "no-such-runtime")])
    window = MainWindow(Store(tmp_path / "c.sqlite3"), link, autoload=False)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=10_000)
        assert "could not be started" in window.banner_text.text() and "no-such-runtime" in window.banner_text.text()
        assert link.state == ConnectionState.CRASHED and not link.auto_restart
        # A restart would come from a timer of RESTART_DELAY_MS started at the crash: Qt fires one of the
        # same length started now after it, so once this one has fired, no restart is still to come.
        states, passed = [], []
        link.sig_state_changed.connect(states.append)
        QTimer.singleShot(RESTART_DELAY_MS, lambda: passed.append(True))
        qt_wait_until(lambda: passed, 10, "the moment a restart would have begun")
        assert link.restarts == 0 and states == [] and link.state == ConnectionState.CRASHED
    finally:
        window.shutdown()


FAKE_OLD_RUNTIME = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32007, "message": "client speaks protocol 1.0, this runtime speaks 2.0"}}), flush=True)
"""


def test_a_runtime_of_another_protocol_version_is_refused_plainly(qtbot, tmp_path):
    # A real runtime always speaks our version, so a stand-in plays the other one.
    from app.runtime_link import RuntimeLink

    script = tmp_path / "old_runtime.py"
    script.write_text(FAKE_OLD_RUNTIME)
    link = RuntimeLink([sys.executable, str(script)])
    crashes = []
    link.sig_crashed.connect(crashes.append)
    link.start()
    try:
        qtbot.waitUntil(lambda: bool(crashes), timeout=20_000)
        assert "refused to start" in crashes[0] and "protocol" in crashes[0]
        assert not link.auto_restart
    finally:
        link.close()
        link.deleteLater()
        qtbot.wait(50)


def test_a_corrupt_conversation_database_is_set_aside(qtbot, tmp_path, starter_model):
    from app.main import create_main_window

    path = tmp_path / "conversations.sqlite3"
    path.write_bytes(b"garbage, not SQLite" * 100)
    window = create_main_window(store_path=path, autoload=False)
    qtbot.addWidget(window)
    try:
        assert not window.banner.isHidden() and "was damaged" in window.banner_text.text()
        aside = list(tmp_path.glob("conversations.sqlite3.damaged-*"))
        assert len(aside) == 1 and aside[0].read_bytes().startswith(b"garbage")
        assert window.store.schema_version == st.SCHEMA_VERSION
        window.chat.new_conversation("after the repair")
        assert [c.title for c in window.store.conversations()] == ["after the repair"]
    finally:
        window.shutdown()


def test_an_empty_or_blank_message_is_not_sent(qtbot, window):
    assert window.chat.send("") is False
    assert window.chat.send("   \n\t") is False
    assert window.chat.messages.rowCount() == 0 and not window.chat.generating
