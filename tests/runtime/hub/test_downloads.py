"""The downloader against the loopback hub: real HTTP, real files, injected faults."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path

import pytest

from download_recorder import Recorder
from mounts import tmpfs
from runtime.hub.downloads import DownloadManager
from runtime.protocol import DownloadStartParams, ErrorCode, RpcError
from sample_repos import GATED_REPO, SMOL_FILE, SMOL_REPO

HALFWAY = 48_000_000  # bytes of the starter model's 98 MB at which the hub holds the file (Faults.stall_after)


@pytest.fixture
def manager(hub, tmp_path):
    recorder = Recorder()
    m = DownloadManager(recorder, cache_dir=tmp_path / "hf", state_dir=tmp_path / "state", backoff_s=0.05)
    m.recorder = recorder
    yield m
    m.close()


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_download_lands_in_the_hugging_face_cache_layout_and_huggingface_hub_finds_it(hub, manager, tmp_path, starter_model):
    info = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    done = manager.recorder.wait(info.id)
    assert done.state == "done", done.error
    repo_dir = tmp_path / "hf" / "models--lokal-test--SmolLM2-135M-Instruct-GGUF"
    commit = hub.repos[SMOL_REPO].commit
    link = repo_dir / "snapshots" / commit / SMOL_FILE
    assert done.paths == [str(link)]
    assert link.is_symlink() and os.readlink(link) == f"../../blobs/{hub.repos[SMOL_REPO].files[SMOL_FILE].sha256}"
    assert sha256_of(link) == sha256_of(starter_model)
    assert (repo_dir / "refs" / "main").read_text() == commit
    assert not list((repo_dir / "blobs").glob("*.incomplete"))

    # Another Hugging Face tool sees the file as cached: it asks the hub with HEAD only, never GET.
    from huggingface_hub import hf_hub_download

    hub.requests.clear()
    path = hf_hub_download(SMOL_REPO, SMOL_FILE, cache_dir=tmp_path / "hf", endpoint=hub.url)
    assert Path(path) == link
    assert [m for m, _p, _r in hub.requests] == ["HEAD"]


def test_connection_dropped_mid_file_resumes_with_a_range_request_and_verifies(hub, manager, tmp_path, starter_model):
    cut = 40_000_000
    hub.faults.drop_after[SMOL_FILE] = (cut, 1)
    info = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    done = manager.recorder.wait(info.id)
    assert done.state == "done", done.error
    assert done.attempts == 1
    first, resumed = hub.ranges_for(SMOL_FILE)
    assert first is None
    assert cut - (1 << 20) < int(resumed[len("bytes="):-1]) <= cut  # from what reached the disk
    assert sha256_of(Path(done.paths[0])) == sha256_of(starter_model)


def test_corrupted_bytes_are_rejected_and_the_file_deleted(hub, manager, tmp_path):
    hub.faults.corrupt.add(SMOL_FILE)
    info = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    failed = manager.recorder.wait(info.id)
    assert failed.state == "failed"
    assert failed.error_code == ErrorCode.CHECKSUM_MISMATCH
    assert "corrupted" in failed.error and "deleted" in failed.error
    blobs = tmp_path / "hf" / "models--lokal-test--SmolLM2-135M-Instruct-GGUF" / "blobs"
    assert list(blobs.iterdir()) == []
    assert not (blobs.parent / "snapshots").exists()


def test_transient_server_errors_are_retried_with_back_off(hub, manager):
    hub.faults.statuses[SMOL_FILE] = [503, 502, 429]
    info = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    done = manager.recorder.wait(info.id)
    assert done.state == "done", done.error
    assert done.attempts == 3


def test_missing_repository_file_and_quant_give_clear_errors(hub, manager):
    with pytest.raises(RpcError) as e:
        manager.start(DownloadStartParams("lokal-test/does-not-exist"))
    assert e.value.code == ErrorCode.REPO_NOT_FOUND and "lokal-test/does-not-exist" in e.value.message
    with pytest.raises(RpcError) as e:
        manager.start(DownloadStartParams(SMOL_REPO, files=["nope.gguf"]))
    assert e.value.code == ErrorCode.FILE_NOT_FOUND and "nope.gguf" in e.value.message
    with pytest.raises(RpcError) as e:
        manager.start(DownloadStartParams(SMOL_REPO, "Q3_K_S"))
    assert e.value.code == ErrorCode.FILE_NOT_FOUND and "Q4_1" in e.value.message  # it names what exists


def test_file_listed_but_missing_from_storage_is_a_404_file_not_found(hub, manager):
    hub.faults.missing.add(SMOL_FILE)
    info = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    failed = manager.recorder.wait(info.id)
    assert failed.state == "failed"
    assert failed.error_code == ErrorCode.FILE_NOT_FOUND
    assert SMOL_FILE in failed.error


def test_gated_repository_without_a_token_says_log_in(hub, manager, tmp_path):
    info = manager.start(DownloadStartParams(GATED_REPO))
    failed = manager.recorder.wait(info.id)
    assert failed.state == "failed"
    assert failed.error_code == ErrorCode.AUTH_REQUIRED
    assert "hf auth login" in failed.error
    assert failed.error_data["gated"] is True and failed.error_data["repo"].startswith(GATED_REPO)  # the window words it from these
    again = DownloadManager(Recorder(), cache_dir=tmp_path / "hf", state_dir=tmp_path / "state")  # the next start lists it so
    try:
        assert [(d.error_code, d.error_data) for d in again.list()] == [(failed.error_code, failed.error_data)]
    finally:
        again.close()


def test_gated_repository_with_a_token_without_access_says_accept_the_terms(hub, manager, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_not_the_right_one")
    info = manager.start(DownloadStartParams(GATED_REPO))
    failed = manager.recorder.wait(info.id)
    assert failed.error_code == ErrorCode.ACCESS_DENIED, failed.error
    assert "accept" in failed.error and failed.error_data["gated"] is True and failed.error_data["repo"].startswith(GATED_REPO)


def test_gated_repository_with_the_login_token_downloads(hub, manager, monkeypatch, tmp_path):
    # The token file `hf auth login` writes (HF_HOME/token), no HF_TOKEN variable. huggingface_hub
    # fixed its path when this process first imported it; a runtime process reads it at start.
    from huggingface_hub import constants

    token_file = Path(os.environ["HF_HOME"]) / "token"
    token_file.parent.mkdir(parents=True, exist_ok=True)
    token_file.write_text(hub.TOKEN)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(token_file))
    info = manager.start(DownloadStartParams(GATED_REPO))
    assert manager.recorder.wait(info.id).state == "done"


def test_stalled_server_cancel_takes_effect_at_once_and_removes_the_partial_file(hub, manager, tmp_path):
    hub.faults.stall_after[SMOL_FILE] = 10_000_000
    info = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    assert hub.stalled.wait(30)
    # Stalled: progress keeps coming (with the speed falling), at least twice at the stalled offset.
    stalled = lambda: [i for _t, i in manager.recorder.updates if i.state == "running" and i.bytes_done == 10_000_000]
    manager.recorder.wait_until(lambda _info: len(stalled()) >= 2, "two progress updates while stalled")
    started = time.monotonic()
    cancelled = manager.cancel(info.id)
    assert time.monotonic() - started < 3
    assert cancelled.state == "cancelled"
    blobs = tmp_path / "hf" / "models--lokal-test--SmolLM2-135M-Instruct-GGUF" / "blobs"
    assert list(blobs.iterdir()) == []
    assert manager.list() == []
    assert list((tmp_path / "state").glob("*.json")) == []


def halfway(hub, recorder, download_id, offset=HALFWAY):
    """The hub holds the file at `offset` until released: wait until the downloader has those bytes."""
    assert hub.stalled.wait(30)
    recorder.wait_until(lambda i: i.id == download_id and i.bytes_done >= offset, f"{download_id} getting {offset} bytes")


def test_pause_and_resume_continue_from_the_bytes_on_disk(hub, manager, starter_model):
    hub.faults.stall_after[SMOL_FILE] = HALFWAY
    info = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    halfway(hub, manager.recorder, info.id)
    paused = manager.pause(info.id)
    assert paused.state == "paused"
    assert paused.bytes_done == HALFWAY < paused.bytes_total
    hub.faults.stall_after.clear()
    hub.release.set()
    manager.resume(info.id)
    done = manager.recorder.wait(info.id, states=("done", "failed"))
    assert done.state == "done", done.error
    ranges = hub.ranges_for(SMOL_FILE)
    assert ranges[0] is None and ranges[1] == f"bytes={paused.bytes_done}-"
    assert sha256_of(Path(done.paths[0])) == sha256_of(starter_model)


def test_progress_reports_bytes_speed_and_eta_at_least_twice_a_second(hub, manager):
    hub.faults.rate = 50e6  # about two seconds for the file
    info = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    manager.recorder.wait(info.id, states=("done",))
    running = [(t, i) for t, i in manager.recorder.updates if i.state == "running"]
    assert len(running) >= 4
    gaps = [b[0] - a[0] for a, b in zip(running, running[1:])]
    assert max(gaps) <= 0.5
    late = [i for _t, i in running if i.bytes_done > 20e6]
    assert late and all(15e6 < i.speed < 80e6 for i in late)
    assert all(i.eta_s is not None and i.eta_s < 10 for i in late)
    done_bytes = [i.bytes_done for _t, i in running]
    assert done_bytes == sorted(done_bytes)


def test_several_downloads_at_once(hub, manager, tmp_path):
    hub.faults.rate = 60e6
    a = manager.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    b = manager.start(DownloadStartParams(SMOL_REPO, "Q8_0"))  # two shards
    # Both under way at once: each reports bytes before either is done.
    partly_done = lambda: {i.id for _t, i in manager.recorder.updates if i.state == "running" and 0 < i.bytes_done < i.bytes_total}
    manager.recorder.wait_until(lambda _info: partly_done() == {a.id, b.id}, "the two downloads running at the same time")
    assert manager.recorder.wait(a.id).state == "done"
    done_b = manager.recorder.wait(b.id)
    assert done_b.state == "done" and len(done_b.paths) == 2


def test_a_saved_record_in_a_state_this_version_does_not_know_reads_back_paused(hub, tmp_path):
    """A damaged (or newer) record: the download is listed as paused, resumable, rather than carrying a state the
    protocol's DownloadState does not have (which the window could not decode)."""
    recorder = Recorder()
    first = DownloadManager(recorder, cache_dir=tmp_path / "hf", state_dir=tmp_path / "state")
    hub.faults.stall_after[SMOL_FILE] = HALFWAY
    info = first.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    halfway(hub, recorder, info.id)
    first.close()
    hub.faults.stall_after.clear()
    hub.release.set()
    record = tmp_path / "state" / f"{info.id}.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "state": "exploded"}))

    second = DownloadManager(recorder, cache_dir=tmp_path / "hf", state_dir=tmp_path / "state")
    try:
        [saved] = second.list()
        assert saved.id == info.id and saved.state == "paused"
    finally:
        second.close()


def test_a_restarted_manager_resumes_an_interrupted_download(hub, tmp_path, starter_model):
    recorder = Recorder()
    first = DownloadManager(recorder, cache_dir=tmp_path / "hf", state_dir=tmp_path / "state")
    hub.faults.stall_after[SMOL_FILE] = HALFWAY
    info = first.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
    halfway(hub, recorder, info.id)
    first.close()  # what the runtime does when it stops
    hub.faults.stall_after.clear()
    hub.release.set()

    second = DownloadManager(recorder, cache_dir=tmp_path / "hf", state_dir=tmp_path / "state")
    try:
        [saved] = second.list()
        assert saved.id == info.id and saved.state == "paused"
        on_disk = saved.bytes_done
        assert 0 < on_disk < saved.bytes_total
        recorder.clear()
        second.resume(info.id)
        done = recorder.wait(info.id, states=("done", "failed"))
        assert done.state == "done", done.error
        assert hub.ranges_for(SMOL_FILE)[-1] == f"bytes={on_disk}-"
        assert sha256_of(Path(done.paths[0])) == sha256_of(starter_model)
    finally:
        second.close()


def test_no_network_fails_after_retries_with_a_clear_error(hub, tmp_path, monkeypatch):
    recorder = Recorder()
    m = DownloadManager(recorder, cache_dir=tmp_path / "hf", state_dir=tmp_path / "state", backoff_s=0.01, max_retries=2)
    hub.faults.drop_after[SMOL_FILE] = (0, 100)  # the API answers, then every file connection drops at once
    try:
        info = m.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
        failed = recorder.wait(info.id)
        assert failed.state == "failed"
        assert failed.error_code == ErrorCode.NETWORK_ERROR
        assert "network" in failed.error and failed.error_data is not None and SMOL_REPO in failed.error_data["what"]
        assert failed.attempts == 2
    finally:
        m.close()
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(RpcError) as e:
        DownloadManager(recorder, cache_dir=tmp_path / "hf2", state_dir=tmp_path / "state2").start(DownloadStartParams(SMOL_REPO))
    assert e.value.code == ErrorCode.NETWORK_ERROR


@pytest.fixture
def tiny_disk(tmp_path):
    """An 80 MB tmpfs: smaller than the starter model (98 MB)."""
    with tmpfs(tmp_path / "tiny", "80m") as mount:
        yield mount


def test_not_enough_free_disk_is_refused_before_starting(hub, tiny_disk, tmp_path):
    m = DownloadManager(Recorder(), cache_dir=tiny_disk / "hf", state_dir=tmp_path / "state")
    try:
        with pytest.raises(RpcError) as e:
            m.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
        assert e.value.code == ErrorCode.DISK_FULL
        assert "GiB" in e.value.message and e.value.data["needed_bytes"] > e.value.data["free_bytes"]
        assert not list(tiny_disk.rglob("*.incomplete"))
    finally:
        m.close()


def test_disk_filling_up_during_a_download_fails_with_disk_full(hub, tiny_disk, tmp_path):
    # The Q8_0 shards are 49 MB each: the first passes the free-space check on the 80 MB disk.
    recorder = Recorder()
    m = DownloadManager(recorder, cache_dir=tiny_disk / "hf", state_dir=tmp_path / "state")
    shard = "SmolLM2-135M-Instruct-Q8_0-00001-of-00002.gguf"
    hub.faults.stall_after[shard] = 1_000_000
    try:
        info = m.start(DownloadStartParams(SMOL_REPO, files=[shard]))
        assert hub.stalled.wait(30)
        # Meanwhile something else fills the disk.
        with open(tiny_disk / "filler", "wb") as f:
            try:
                while True:
                    f.write(b"\0" * (1 << 20))
            except OSError:
                pass
        hub.release.set()
        failed = recorder.wait(info.id, states=("failed", "done"))
        assert failed.state == "failed"
        assert failed.error_code == ErrorCode.DISK_FULL, failed.error
        assert "disk is full" in failed.error
    finally:
        m.close()
