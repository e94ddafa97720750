"""One free-space floor (runtime/disk_space.py) that saved KV states and downloads both keep.

On a real small filesystem (a tmpfs, tests/mounts.py), with the floor set through LOKAL_DISK_FLOOR_BYTES.
Before: the KV store wrote up to its 5 GB budget and a download kept 16 MiB free, so either could
fill the disk under the conversation database.
"""

from __future__ import annotations

import numpy as np
import pytest

from download_recorder import Recorder
from mounts import tmpfs
from runtime import disk_space
from runtime.hub.downloads import DownloadManager
from runtime.kvstore.store import StateStore
from runtime.protocol import DownloadStartParams, ErrorCode, RpcError
from sample_repos import SMOL_REPO

MiB = 1 << 20
TAG = {"model": "m1", "n_ctx": 512, "type_k": "f16", "type_v": "f16", "swa_full": True, "flash_attn": None, "llama_cpp": "x"}


def test_the_floor_is_1_gib_or_5_percent_and_at_most_a_quarter_of_a_small_volume(tmp_path, monkeypatch):
    monkeypatch.delenv(disk_space.FLOOR_ENV, raising=False)
    with tmpfs(tmp_path / "small", "64m") as small:
        assert disk_space.floor_bytes(small) == 16 * MiB
        assert disk_space.room_bytes(small / "not" / "yet") == disk_space.free_bytes(small) - 16 * MiB
    monkeypatch.setenv(disk_space.FLOOR_ENV, "lots")
    with pytest.raises(ValueError, match=disk_space.FLOOR_ENV):
        disk_space.floor_bytes(tmp_path)


def test_saved_kv_states_keep_the_floor_by_evicting_the_oldest(tmp_path, monkeypatch):
    with tmpfs(tmp_path / "disk", "32m") as disk:
        monkeypatch.setenv(disk_space.FLOOR_ENV, str(24 * MiB))  # room for two 3 MiB states, not three
        store = StateStore(disk / "kv")  # the default 5 GB budget: only the floor can stop it
        rng = np.random.default_rng(0)
        try:
            for turn in range(4):
                store.put(f"conv{turn}", TAG, np.arange(20 + turn, dtype=np.int32), rng.integers(0, 256, 3 * MiB, dtype=np.uint8))
                assert store.flush(60)
                assert disk_space.free_bytes(disk) >= 24 * MiB, f"turn {turn}: the store wrote past the floor"
            on_disk = sorted(p.stem for p in (disk / "kv").glob("*.kvs"))
            assert "conv3" in on_disk and "conv0" not in on_disk  # the newest kept, the oldest evicted
        finally:
            store.flush(10)


def test_a_download_that_would_cross_the_floor_is_refused_before_it_starts(hub, tmp_path, monkeypatch):
    with tmpfs(tmp_path / "disk", "120m") as disk:
        monkeypatch.setenv(disk_space.FLOOR_ENV, str(60 * MiB))  # 60 MiB of room: the 98 MB model does not fit
        recorder = Recorder()
        m = DownloadManager(recorder, cache_dir=disk / "hf", state_dir=tmp_path / "state")
        try:
            with pytest.raises(RpcError) as refused:
                m.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
            assert refused.value.code == ErrorCode.DISK_FULL
            assert "stays free" in refused.value.message and refused.value.data["floor_bytes"] == 60 * MiB
            assert not list(disk.rglob("*.incomplete"))
            # A 49 MB shard fits above the floor, and downloads.
            shard = "SmolLM2-135M-Instruct-Q8_0-00001-of-00002.gguf"
            done = recorder.wait(m.start(DownloadStartParams(SMOL_REPO, files=[shard])).id)
            assert done.state == "done", done.error
            assert disk_space.free_bytes(disk) >= 60 * MiB
        finally:
            m.close()
