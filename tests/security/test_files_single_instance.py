"""The second-instance socket lives in the user's private runtime dir, not under a predictable name in /tmp.

Before: Qt put `lokal-<hash>` in /tmp, where another account could create it first.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from app.single_instance import SingleInstance, server_name


def test_the_socket_is_in_the_private_runtime_dir_and_a_second_launch_still_finds_it(qtbot, tmp_path, monkeypatch):
    run = tmp_path / "run"
    monkeypatch.setenv("LOKAL_RUNTIME_DIR", str(run))
    folder = tmp_path / "data"
    guard = SingleInstance(folder)
    assert guard.acquire()
    try:
        socket = Path(guard._server.fullServerName())
        assert socket.parent == run and socket.exists()
        assert stat.S_IMODE(run.stat().st_mode) == 0o700 and run.stat().st_uid == os.getuid()
        assert str(socket) == server_name(folder)

        # A second launch (another process, the same user and data folder) still reaches this one.
        with qtbot.waitSignal(guard.sig_raise_requested, timeout=60_000):
            second = subprocess.Popen(
                [sys.executable, "-c", "import sys; from pathlib import Path; from PySide6.QtCore import QCoreApplication; "
                 "from app.single_instance import ask_first_instance_to_raise; app = QCoreApplication([]); "
                 "sys.exit(0 if ask_first_instance_to_raise(Path(sys.argv[1])) else 3)", str(folder)],
                env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
            )
            qtbot.waitUntil(lambda: second.poll() is not None, timeout=60_000)
        assert second.returncode == 0
    finally:
        guard.release()


def test_the_runtime_dir_is_tightened_if_it_was_left_open(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    os.chmod(run, 0o755)
    monkeypatch.setenv("LOKAL_RUNTIME_DIR", str(run))
    server_name(tmp_path / "data")
    assert stat.S_IMODE(run.stat().st_mode) == 0o700
