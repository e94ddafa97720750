"""Lokal's files are the user's alone: folders 0700, files 0600, old ones tightened; exports keep the umask.

Every process here runs under the usual umask (022), with which an unhardened Lokal makes its folders
0755 and its files (the conversations database, its -wal/-shm, saved KV states, logs) 0644.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app.storage.store import Store
from runtime.client import RuntimeClient
from runtime.protocol import ChatGenerateParams, ChatMessage, KvStoreInfoParams, ModelLoadParams, methods
from waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
DIRS = ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR")
USUAL_UMASK = 0o022
START_S = 180


@pytest.fixture
def usual_umask():
    previous = os.umask(USUAL_UMASK)
    yield
    os.umask(previous)


def lokal_env(tmp_path: Path) -> tuple[dict, dict[str, Path]]:
    dirs = {name: tmp_path / name.lower() for name in DIRS}
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **{k: str(v) for k, v in dirs.items()}}
    env["LOKAL_RUNTIME_DIR"] = str(tmp_path / "run")
    return env, dirs


def not_private(folders) -> list[str]:
    """Every folder and file under `folders` that group or others may read, write or enter (links are not files)."""
    found = []
    for folder in folders:
        if not Path(folder).exists():
            continue
        for path in [Path(folder), *Path(folder).rglob("*")]:
            st = path.lstat()
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                found.append(f"{path.relative_to(Path(folder).parent)} {stat.filemode(st.st_mode)}")
    return found


def plant_old_files(dirs: dict[str, Path]) -> list[Path]:
    """What an older Lokal left: 0755 folders and 0644 files, among them a real conversations database."""
    planted = []
    for folder in dirs.values():
        folder.mkdir(parents=True)
        os.chmod(folder, 0o755)
        planted.append(folder)
    store = Store(dirs["LOKAL_DATA_DIR"] / "conversations.sqlite3")
    store.create_conversation("an old conversation")
    store.close()
    old = [
        dirs["LOKAL_DATA_DIR"] / "conversations.sqlite3",
        dirs["LOKAL_CACHE_DIR"] / "notes" / "old.txt",
        dirs["LOKAL_LOG_DIR"] / "window.log",
        dirs["LOKAL_CONFIG_DIR"] / "endpoints.json",
    ]
    for path in old:
        path.parent.mkdir(exist_ok=True)
        os.chmod(path.parent, 0o755)
        if not path.exists():
            path.write_text("{}\n" if path.suffix == ".json" else "old\n")
        os.chmod(path, 0o644)
        planted += [path, path.parent]
    return planted


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def test_the_window_and_its_runtime_leave_only_private_files_and_tighten_old_ones(tmp_path):
    env, dirs = lokal_env(tmp_path)
    planted = plant_old_files(dirs)
    logs = dirs["LOKAL_LOG_DIR"]
    window = subprocess.Popen(
        [sys.executable, "-m", "app"], env=env, umask=USUAL_UMASK, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_until(lambda: "window shown" in read(logs / "window.log"), START_S, "\"window shown\" in window.log")
        wait_until(lambda: "runtime started" in read(logs / "runtime.log"), START_S, "\"runtime started\" in runtime.log")
        window.send_signal(signal.SIGTERM)  # closes the window the normal way: the runtime shuts down too
        window.wait(60)
    finally:
        if window.poll() is None:
            window.kill()
            window.wait(30)
    assert window.returncode == 0, window.stderr.read()[-3000:]
    assert (dirs["LOKAL_DATA_DIR"] / "conversations.sqlite3-wal").exists() or (dirs["LOKAL_DATA_DIR"] / "conversations.sqlite3").exists()
    assert not not_private(dirs.values())
    assert all(not p.stat().st_mode & 0o077 for p in planted)
    assert "files and folders private" in read(logs / "window.log")  # it says what it changed


@pytest.mark.parametrize(
    "command",
    [[sys.executable, "-m", "runtime"], [sys.executable, str(ROOT / "packaging" / "entry.py"), "runtime"]],
    ids=["runtime", "frozen-entry"],
)
def test_the_runtime_saves_kv_states_and_logs_privately(tmp_path, starter_model, usual_umask, command):
    env, dirs = lokal_env(tmp_path)
    env.update(LOKAL_KV_MIN_TOKENS="16", LOKAL_KV_STORE="on")
    client = RuntimeClient(command, env=env)  # inherits this test's umask, 022
    try:
        client.initialize("pytest")
        client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512))
        messages = [ChatMessage("system", "You answer in one short sentence."), ChatMessage("user", "What is the capital of France, and which river runs through it?")]
        client.chat(ChatGenerateParams("a", messages, max_tokens=8, temperature=0.0), timeout=180)
        info = client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)
        assert info.entries == 1 and info.disk_bytes > 0
    finally:
        client.close()
    assert list((dirs["LOKAL_CACHE_DIR"] / "kv").glob("*.kvs"))
    assert (dirs["LOKAL_LOG_DIR"] / "runtime.log").exists()
    assert not not_private(dirs.values())


def test_the_conversations_database_and_its_wal_are_private(tmp_path, usual_umask):
    path = tmp_path / "data" / "conversations.sqlite3"
    store = Store(path)
    try:
        conv = store.create_conversation("private")
        store.add_message(conv.id, "user", "something only I should read")
        files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
        assert all(f.exists() for f in files)
        assert not not_private([path.parent])
    finally:
        store.close()

    for f in [path.parent, *path.parent.iterdir()]:  # as an older Lokal left them
        os.chmod(f, 0o755 if f.is_dir() else 0o644)
    Store(path).close()
    assert not [f for f in path.parent.iterdir() if f.stat().st_mode & 0o077]


def test_an_export_keeps_the_users_umask_in_a_process_that_made_its_own_files_private(tmp_path, usual_umask):
    from app.chat import export
    from runtime import private_files

    private_files.restrict_umask()  # as the runtime and the headless commands do
    try:
        inside = tmp_path / "lokal-file"
        inside.write_text("mine alone")
        export.save(tmp_path / "chat.md", "# A conversation\n")
    finally:
        os.umask(USUAL_UMASK)
        private_files._user_umask = None
    assert stat.S_IMODE(inside.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "chat.md").stat().st_mode) == 0o644
    assert (tmp_path / "chat.md").read_text() == "# A conversation\n"
