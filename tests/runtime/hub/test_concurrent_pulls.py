"""Two `lokal pull` processes of one file, each with its own runtime, over one cache: the file is fetched
once, into one verified blob, and the second says it waited (a file lock per blob, where huggingface_hub
keeps its own)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading

import pytest

from runtime.protocol import methods
from sample_repos import SMOL_FILE, SMOL_REPO, hub_env
from waiting import wait_until

pytestmark = pytest.mark.slow


class StderrWatch:
    """Collects a process's stderr as it comes (tqdm writes no newlines) and says when a text appears."""

    def __init__(self, process: subprocess.Popen):
        self.text = ""
        # The watch owns the pipe from here on: communicate() would otherwise read stderr too and race this
        # thread for its last lines.
        self._stream, process.stderr = process.stderr, None
        self._thread = threading.Thread(target=self._read, args=(self._stream.fileno(),), daemon=True)
        self._thread.start()

    def _read(self, fd: int) -> None:
        while chunk := os.read(fd, 4096):
            self.text += chunk.decode(errors="replace")

    def wait_for(self, needle: str, timeout: float) -> bool:
        """Whether `needle` appeared before the stream ended (bounded: an AssertionError after `timeout`)."""
        wait_until(lambda: needle in self.text or not self._thread.is_alive(), timeout, lambda: f"{needle!r} on stderr, or its end (so far: {self.text[-2000:]})")
        return needle in self.text

    def rest(self) -> str:
        self._thread.join(timeout=30)
        return self.text


def test_two_pulls_of_one_file_fetch_it_once_and_the_second_says_it_waited(hub, tmp_path, starter_model):
    env = {**os.environ, **hub_env(hub, tmp_path)}
    pull = [sys.executable, "-m", "app", "pull", f"{SMOL_REPO}:Q4_1"]
    hub.faults.stall_after[SMOL_FILE] = 4 << 20  # the first pull holds the file half-way until released

    first = subprocess.Popen(pull, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first_err = StderrWatch(first)
    try:
        assert hub.stalled.wait(120), f"the first pull never started fetching: {first_err.text[-2000:]}"
        second = subprocess.Popen(pull, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        second_err = StderrWatch(second)
        try:
            waited = second_err.wait_for("waiting: another process is downloading", timeout=90)
            hub.release.set()
            assert waited, f"the second pull did not wait for the first: {second_err.text[-2000:]}"
            out_second, _ = second.communicate(timeout=180)
        finally:
            second.kill()
        out_first, _ = first.communicate(timeout=180)
    finally:
        hub.release.set()
        first.kill()

    assert first.returncode == 0, first_err.rest()[-2000:]
    assert second.returncode == 0, second_err.rest()[-2000:]
    assert "done after waiting for another process's download" in second_err.rest()
    path = out_first.decode().strip().splitlines()[-1]
    assert out_second.decode().strip().splitlines()[-1] == path

    expected = hub.repos[SMOL_REPO].files[SMOL_FILE].sha256
    repo_dir = tmp_path / "hf_home" / "hub" / ("models--" + SMOL_REPO.replace("/", "--"))
    assert sorted(p.name for p in (repo_dir / "blobs").iterdir()) == [expected]  # one blob, no .incomplete
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == expected
    assert hub.ranges_for(SMOL_FILE) == [None]  # its bytes crossed the network once: the second pull asked for none
    assert (tmp_path / "hf_home" / "hub" / ".locks" / repo_dir.name / f"{expected}.lock").exists()


def test_cancelling_the_waiting_download_leaves_the_other_process_s_file_alone(hub, tmp_path, starter_model):
    from runtime.client import RuntimeClient
    from runtime.protocol import DownloadIdParams, DownloadStartParams
    from test_no_symlinks import Downloads

    env = {**os.environ, **hub_env(hub, tmp_path)}
    hub.faults.stall_after[SMOL_FILE] = 4 << 20
    first_notes, second_notes = Downloads(), Downloads()
    first = RuntimeClient(env=env, on_notification=first_notes)
    second = RuntimeClient(env={**env, "LOKAL_DATA_DIR": str(tmp_path / "other_data")}, on_notification=second_notes)  # its own records
    try:
        first.initialize("pytest-first")
        second.initialize("pytest-second")
        fetching = first.request(methods.DOWNLOAD_START, DownloadStartParams(SMOL_REPO, "Q4_1"), timeout=60)
        assert hub.stalled.wait(60)
        waiting = second.request(methods.DOWNLOAD_START, DownloadStartParams(SMOL_REPO, "Q4_1"), timeout=60)
        second_notes.wait(waiting.id, states=("waiting",), timeout=30)

        cancelled = second.request(methods.DOWNLOAD_CANCEL, DownloadIdParams(waiting.id), timeout=30)
        assert cancelled.state == "cancelled"
        repo_dir = tmp_path / "hf_home" / "hub" / ("models--" + SMOL_REPO.replace("/", "--"))
        expected = hub.repos[SMOL_REPO].files[SMOL_FILE].sha256
        partial = repo_dir / "blobs" / f"{expected}.incomplete"
        assert partial.exists() and 0 < partial.stat().st_size <= 4 << 20  # the first one's, not deleted nor added to

        hub.release.set()
        done = first_notes.wait(fetching.id)
        assert done.state == "done", done.error
        assert hashlib.sha256(open(done.paths[0], "rb").read()).hexdigest() == expected
    finally:
        hub.release.set()
        first.close()
        second.close()
