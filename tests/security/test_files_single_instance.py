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


def test_without_a_user_runtime_dir_the_socket_goes_to_the_data_dir_not_tmp(tmp_path, monkeypatch):
    """No XDG_RUNTIME_DIR (a container, a CI job): platformdirs offers /tmp/runtime-<uid>, a name another account
    can take first, and warns. The data directory's own private folder serves instead, with no warning."""
    import warnings

    from runtime import paths

    monkeypatch.delenv("LOKAL_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("LOKAL_DATA_DIR", str(tmp_path / "data"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen = paths.runtime_dir()
        assert paths.runtime_dir() == chosen  # the same again: platformdirs warns once a process, the choice is not its warning
    if Path(f"/run/user/{os.getuid()}").is_dir():  # a login with systemd: the platform's own runtime dir is right
        assert chosen.parent == Path(f"/run/user/{os.getuid()}")
    else:
        assert chosen == tmp_path / "data" / "run"
        assert stat.S_IMODE(chosen.stat().st_mode) == 0o700
