"""Where symlinks are refused (Windows without developer mode or admin rights), staged on Linux by a runtime
whose os.symlink fails as Windows' does: the verified blob is moved to its snapshot path (the model takes
its size once), `lokal rm` frees it, and the download is no longer "done", so it can be pulled again."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from runtime.client import RuntimeClient
from runtime.protocol import DownloadInfo, DownloadStartParams, decode, methods
from sample_repos import SMOL_FILE, SMOL_REPO, hub_env
from waiting import wait_until

pytestmark = pytest.mark.slow

# The runtime, started as usual, with os.symlink failing the way it does for a Windows user without the right.
RUNTIME_WITHOUT_SYMLINKS = """
import errno, os, sys
def refused(*args, **kwargs):
    raise OSError(errno.EPERM, "A required privilege is not held by the client")
os.symlink = refused
from runtime.server import main
sys.exit(main())
"""


class Downloads:
    """download.progress notifications, and a bounded wait for one download's next terminal state."""

    def __init__(self):
        self.seen: list[DownloadInfo] = []
        self._lock = threading.Lock()

    def __call__(self, method, params):
        if method == "download.progress":
            with self._lock:
                self.seen.append(decode(DownloadInfo, params, "params"))

    def wait(self, download_id: str, after: int = 0, timeout: float = 120, states=("done", "failed", "cancelled", "paused")) -> DownloadInfo:
        def terminal():
            with self._lock:
                return next((d for d in self.seen[after:] if d.id == download_id and d.state in states), None)

        return wait_until(terminal, timeout, lambda: f"download {download_id} reaching {states} (last: {self.seen[-1:]})")


def test_without_symlinks_the_blob_is_moved_rm_frees_it_and_it_can_be_pulled_again(hub, tmp_path, starter_model):
    env = {**os.environ, **hub_env(hub, tmp_path)}
    downloads = Downloads()
    client = RuntimeClient(command=[sys.executable, "-c", RUNTIME_WITHOUT_SYMLINKS], env=env, on_notification=downloads)
    try:
        client.initialize("pytest-no-symlinks")
        started = client.request(methods.DOWNLOAD_START, DownloadStartParams(SMOL_REPO, "Q4_1"), timeout=60)
        done = downloads.wait(started.id)
        assert done.state == "done", done.error

        expected = hub.repos[SMOL_REPO].files[SMOL_FILE]
        snapshot = Path(done.paths[0])
        assert snapshot.is_file() and not snapshot.is_symlink()
        assert hashlib.sha256(snapshot.read_bytes()).hexdigest() == expected.sha256
        repo_dir = snapshot.parents[2]
        assert list((repo_dir / "blobs").iterdir()) == []  # moved, not copied: the model is on disk once
        model_bytes = sum(p.stat().st_size for d in ("blobs", "snapshots") for p in (repo_dir / d).rglob("*") if p.is_file() and not p.is_symlink())
        assert model_bytes == expected.size

        removed = subprocess.run([sys.executable, "-m", "app", "rm", f"{SMOL_REPO}:Q4_1"], capture_output=True, text=True, timeout=180, env=env)
        assert removed.returncode == 0, removed.stderr
        assert "98.4 MB freed" in removed.stdout
        assert not snapshot.exists() and not any(p.is_file() for d in ("blobs", "snapshots") for p in (repo_dir / d).rglob("*"))

        listed = client.request(methods.DOWNLOAD_LIST, timeout=30).downloads
        assert not [d for d in listed if d.repo == SMOL_REPO and d.state == "done"], listed

        before = len(downloads.seen)
        again = client.request(methods.DOWNLOAD_START, DownloadStartParams(SMOL_REPO, "Q4_1"), timeout=60)
        assert again.state != "done"  # not the old record: a new download
        done_again = downloads.wait(again.id, after=before)
        assert done_again.state == "done", done_again.error
        assert Path(done_again.paths[0]).stat().st_size == expected.size
    finally:
        client.close()
