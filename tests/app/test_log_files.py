"""Logs a user can find: the window's and the runtime's log files, and a native crash's stack beside them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from runtime.paths import log_dir
from waiting import wait_until
from window_helpers import open_window

START_S = 180


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def test_the_log_folder_holds_both_processes_logs_and_native_crash_stacks(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    for name in ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR"):
        env[name] = str(tmp_path / name.lower())
    logs = tmp_path / "lokal_log_dir"
    window = subprocess.Popen([sys.executable, "-m", "app"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: "window shown" in text(logs / "window.log"), START_S, "\"window shown\" in window.log")
        wait_until(lambda: "runtime started" in text(logs / "runtime.log"), START_S, "\"runtime started\" in runtime.log")
        runtime_pid = next(child.pid for child in psutil.Process(window.pid).children(recursive=True) if "runtime" in " ".join(child.cmdline()))

        os.kill(runtime_pid, signal.SIGSEGV)  # a native crash in the runtime (as llama.cpp's would be)
        wait_until(lambda: "Segmentation fault" in text(logs / "runtime-crash.log"), 30, "the runtime's crash stack in runtime-crash.log")
        assert "File " in text(logs / "runtime-crash.log")  # the Python frames of the crashed process

        os.kill(window.pid, signal.SIGSEGV)  # and one in the window
        window.wait(30)
        crash = text(logs / "window-crash.log")
        assert "Segmentation fault" in crash and "File " in crash
        assert f"window pid {window.pid} started" in crash
    finally:
        if window.poll() is None:
            window.kill()
            window.wait(30)


class _FolderOpener(QObject):
    def __init__(self):
        super().__init__()
        self.opened: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url)


def test_help_opens_the_log_folder_and_about_names_it(qtbot, tmp_path, starter_model, monkeypatch):
    window = open_window(qtbot, tmp_path / "c.sqlite3", starter_model, load=False)
    opener = _FolderOpener()
    QDesktopServices.setUrlHandler("file", opener, "open")
    try:
        window.help.action_open_logs.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(url.toLocalFile()) for url in opener.opened] == [log_dir()]
    shown = []
    monkeypatch.setattr("app.ui.help_menu.QMessageBox.about", lambda _parent, _title, body: shown.append(body))
    window.help.show_about()
    window.shutdown()
    assert str(log_dir()) in shown[0]
