"""One window per data directory: a second launch raises the first and never opens its database."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from PySide6.QtCore import QLockFile

from app.chat.controller import ConversationSettings
from app.single_instance import LOCK_NAME, SingleInstance
from app.storage import store as st
from runtime.paths import data_dir
from window_helpers import open_window, wait_reply

SECOND_LAUNCH_S = 120


def launch_second(env_extra: dict | None = None) -> subprocess.Popen:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-m", "app"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_second_launch_raises_the_first_window_and_leaves_its_streaming_reply_alone(qtbot, starter_model):
    guard = SingleInstance(data_dir())
    assert guard.acquire()
    settings = ConversationSettings(temperature=0.0, max_tokens=96, n_ctx=2048, seed=1)
    window = open_window(qtbot, data_dir() / "conversations.sqlite3", starter_model, settings=settings)
    guard.sig_raise_requested.connect(window.bring_to_front)
    try:
        conv = window.chat.new_conversation()
        # A reply the database marks as streaming: a second instance's start-up recovery would mark it interrupted.
        probe = window.store.add_message(conv.id, "assistant", "still streaming", state=st.STREAMING)
        window.chat.open(None)
        window.chat.open(conv.id)
        window.chat.send("Write a short poem about lighthouses.")
        assert window.chat.generating
        window.showMinimized()

        with qtbot.waitSignal(guard.sig_raise_requested, timeout=SECOND_LAUNCH_S * 1000):
            second = launch_second()
            qtbot.waitUntil(lambda: second.poll() is not None, timeout=SECOND_LAUNCH_S * 1000)
        output = second.stdout.read()
        assert second.returncode == 0, output
        assert not window.isMinimized() and window.isVisible()

        states = {m.id: m.state for m in window.store.messages(conv.id)}
        assert states[probe.id] == st.STREAMING  # the second launch never opened the database
        wait_reply(qtbot, window)
        reply = window.chat.messages.messages[-1]
        assert reply.state == st.COMPLETE and reply.content
        stored = {m.id: m for m in window.store.messages(conv.id)}
        assert stored[reply.id].content == reply.content and stored[reply.id].state == st.COMPLETE
    finally:
        window.shutdown()
        guard.release()


def test_a_lock_left_by_a_crashed_instance_is_taken_over(tmp_path):
    folder = tmp_path / "data"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; from app.single_instance import SingleInstance; "
         "g = SingleInstance(Path(sys.argv[1])); print(g.acquire(), flush=True); sys.stdin.read()", str(folder)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert holder.stdout.readline().strip() == "True"
    assert not SingleInstance(folder).acquire()  # alive: the lock is its own
    holder.kill()  # a crash: no chance to remove the lock file
    holder.wait(30)
    assert (folder / LOCK_NAME).exists()
    guard = SingleInstance(folder)
    try:
        assert guard.acquire()
        pid, _host, _app = guard.lock.getLockInfo()
        assert pid == os.getpid()
    finally:
        guard.release()


def test_a_running_instance_keeps_its_lock_past_qt_default_stale_time(tmp_path):
    folder = tmp_path / "data"
    guard = SingleInstance(folder)
    assert guard.acquire()
    try:
        # QLockFile's default would call a lock older than 30 s stale even with its owner alive.
        old = time.time() - 3600
        os.utime(folder / LOCK_NAME, (old, old))
        other = QLockFile(str(folder / LOCK_NAME))
        other.setStaleLockTime(0)
        assert not other.tryLock(100)
        assert not SingleInstance(folder).acquire()
    finally:
        guard.release()


def test_headless_commands_are_not_blocked_by_a_running_window(tmp_path):
    guard = SingleInstance(data_dir())
    assert guard.acquire()
    try:
        done = subprocess.run([sys.executable, "-m", "app", "kv", "info", "--json"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert '"enabled"' in done.stdout
    finally:
        guard.release()
