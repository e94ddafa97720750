"""The hub methods through the real runtime process: typed replies, progress notifications, downloads
that never take the engine's job slot, resume after a restart, and one test per kind of bad input."""

from __future__ import annotations

import os

import pytest

from bad_input import expect_error, still_serving
from runtime.client import RuntimeClient
from runtime.protocol import (
    DownloadIdParams,
    DownloadInfo,
    DownloadStartParams,
    ErrorCode,
    HubQuantsParams,
    HubSearchParams,
    ModelLoadParams,
    ModelsAddParams,
    ModelsRemoveParams,
    ModelsRemoveResult,
    decode,
    methods,
)
from sample_repos import DRAFT_REPO, GATED_REPO, SMOL_FILE, SMOL_REPO, TARGET_REPO, VISION_REPO, Notes, hub_env

pytestmark = pytest.mark.slow


def progress_of(download_id, condition):
    """A notes condition: a download.progress of `download_id` for which condition(DownloadInfo) holds."""
    return lambda method, data: method == "download.progress" and data.get("id") == download_id and condition(decode(DownloadInfo, data, "params"))


def wait_for_download(client, download_id, states=("done", "failed", "cancelled", "paused"), timeout=120):
    _method, data = client.notes.wait_until(progress_of(download_id, lambda info: info.state in states), f"download {download_id} reaching {states}", timeout)
    return decode(DownloadInfo, data, "params")


def test_catalog_search_and_quants(hub_runtime, hub):
    catalog = hub_runtime.request(methods.HUB_CATALOG, timeout=30)
    repos = {e.repo for e in catalog.entries}
    assert len(catalog.entries) >= 10 and all(r.count("/") == 1 for r in repos)
    drafts = [e.draft for e in catalog.entries if e.draft]
    assert drafts and set(drafts) <= repos  # every draft partner is itself in the catalog

    found = hub_runtime.request(methods.HUB_SEARCH, HubSearchParams("lokal-test", limit=10), timeout=60)
    assert [r.id for r in found.repos] == [SMOL_REPO, TARGET_REPO, DRAFT_REPO, GATED_REPO, VISION_REPO]  # by downloads
    assert found.repos[3].gated

    quants = hub_runtime.request(methods.HUB_QUANTS, HubQuantsParams(SMOL_REPO, n_ctx=2048), timeout=120)
    assert [lv.name for lv in quants.levels] == ["Q4_1", "Q8_0", "F32"]
    assert [lv.fit.label for lv in quants.levels][-1] == "too_big"
    assert quants.levels[0].fit.label in ("ram", "gpu")


def test_download_streams_progress_and_leaves_the_engine_slot_free(hub_runtime, hub, starter_model):
    hub.faults.rate = 40e6  # about 2.5 s
    info = hub_runtime.request(methods.DOWNLOAD_START, DownloadStartParams(SMOL_REPO, "Q4_1"), timeout=60)
    assert info.state == "running" and info.bytes_total == starter_model.stat().st_size
    # While it downloads, the engine loads a model: no BUSY.
    loaded = hub_runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512), timeout=120)
    assert loaded.architecture == "llama"
    done = wait_for_download(hub_runtime, info.id)
    assert done.state == "done", done.error
    progress = [d for m, d in hub_runtime.notes if m == "download.progress" and d["id"] == info.id and d["state"] == "running"]
    assert len(progress) >= 4 and any(d["speed"] > 0 and d["eta_s"] for d in progress)

    listed = hub_runtime.request(methods.DOWNLOAD_LIST, timeout=30)
    assert [d.state for d in listed.downloads] == ["done"]
    models = hub_runtime.request(methods.MODELS_LIST, timeout=60).models
    [ours] = [m for m in models if m.repo == SMOL_REPO]
    assert ours.path == done.paths[0] and ours.quantization == "Q4_1" and ours.source == "hf_cache"
    # The downloaded file is a model the runtime loads.
    assert hub_runtime.load_model(ModelLoadParams(path=ours.path, n_ctx=512), timeout=120).quantization == "Q4_1"

    removed = hub_runtime.request(methods.MODELS_REMOVE, ModelsRemoveParams(ours.id), timeout=60)
    assert removed == ModelsRemoveResult(removed=True, freed_bytes=starter_model.stat().st_size)
    assert not os.path.exists(ours.path)
    models = hub_runtime.request(methods.MODELS_LIST, timeout=60).models
    assert not [m for m in models if m.repo == SMOL_REPO]


def test_a_download_interrupted_by_a_runtime_restart_resumes(hub, tmp_path):
    env = {**os.environ, **hub_env(hub, tmp_path)}
    hub.faults.rate = 30e6
    notes = Notes()
    first = RuntimeClient(env=env, on_notification=notes)
    first.initialize("pytest-restart")
    info = first.request(methods.DOWNLOAD_START, DownloadStartParams(SMOL_REPO, "Q4_1"), timeout=60)
    notes.wait_until(progress_of(info.id, lambda i: i.bytes_done > 0), "bytes arriving before the restart")
    first.close()  # shutdown pauses the download and keeps its bytes
    hub.faults.rate = None

    second = RuntimeClient(env=env, on_notification=notes)
    second.notes = notes
    try:
        second.initialize("pytest-restart")
        [saved] = second.request(methods.DOWNLOAD_LIST, timeout=30).downloads
        assert saved.id == info.id and saved.state == "paused" and 0 < saved.bytes_done < saved.bytes_total
        notes.clear()
        second.request(methods.DOWNLOAD_RESUME, DownloadIdParams(info.id), timeout=30)
        done = wait_for_download(second, info.id, ("done", "failed"))
        assert done.state == "done", done.error
        assert hub.ranges_for(SMOL_FILE)[-1] == f"bytes={saved.bytes_done}-"
    finally:
        second.close()


# ---- bad input: a clear error each, and the runtime keeps serving -------------------------------

def test_bad_search_limit(hub_runtime):
    expect_error(hub_runtime, "hub.search", {"query": "x", "limit": 0}, ErrorCode.INVALID_PARAMS, "params.limit")


def test_quants_without_a_repo(hub_runtime):
    expect_error(hub_runtime, "hub.quants", {}, ErrorCode.INVALID_PARAMS, "params.repo")


def test_quants_with_a_tiny_context(hub_runtime):
    expect_error(hub_runtime, "hub.quants", {"repo": SMOL_REPO, "n_ctx": 1}, ErrorCode.INVALID_PARAMS, "n_ctx")


def test_quants_of_a_repository_that_does_not_exist(hub_runtime):
    expect_error(hub_runtime, "hub.quants", {"repo": "lokal-test/missing"}, ErrorCode.REPO_NOT_FOUND, "lokal-test/missing")


def test_download_of_an_unknown_quant(hub_runtime):
    expect_error(hub_runtime, "download.start", {"repo": SMOL_REPO, "quant": "Q2_K"}, ErrorCode.FILE_NOT_FOUND, "Q4_1")


def test_download_of_a_gated_repository_without_a_token(hub_runtime):
    info = hub_runtime.request(methods.DOWNLOAD_START, DownloadStartParams(GATED_REPO), timeout=60)
    failed = wait_for_download(hub_runtime, info.id)
    assert failed.error_code == ErrorCode.AUTH_REQUIRED and "hf auth login" in failed.error
    still_serving(hub_runtime)


def test_control_of_an_unknown_download(hub_runtime):
    for method in ("download.pause", "download.resume", "download.cancel"):
        expect_error(hub_runtime, method, {"id": "nope"}, ErrorCode.DOWNLOAD_NOT_FOUND, "nope")


def test_adding_a_file_that_does_not_exist(hub_runtime, tmp_path):
    expect_error(hub_runtime, "models.add", {"path": str(tmp_path / "missing.gguf")}, ErrorCode.MODEL_NOT_FOUND, "not found")


def test_adding_a_file_that_is_not_gguf(hub_runtime, tmp_path):
    p = tmp_path / "notes.gguf"
    p.write_text("not a model\n" * 100)
    expect_error(hub_runtime, "models.add", {"path": str(p)}, ErrorCode.INVALID_MODEL, "not a usable GGUF")


def test_adding_a_truncated_gguf(hub_runtime, tmp_path, starter_model):
    p = tmp_path / "cut.gguf"
    with open(starter_model, "rb") as f:
        p.write_bytes(f.read(5_000_000))
    expect_error(hub_runtime, "models.add", {"path": str(p)}, ErrorCode.INVALID_MODEL, "truncated")


def test_removing_an_unknown_model(hub_runtime):
    expect_error(hub_runtime, "models.remove", {"id": "hf:nobody/nothing.gguf"}, ErrorCode.MODEL_NOT_FOUND, "nobody")


def test_draft_check_with_a_missing_local_file(hub_runtime, tmp_path):
    ref = {"path": str(tmp_path / "missing.gguf")}
    expect_error(hub_runtime, "hub.draft_check", {"target": ref, "draft": ref}, ErrorCode.MODEL_NOT_FOUND, "not found")


def test_adding_a_real_model_lists_it_and_forgetting_keeps_the_file(hub_runtime, tmp_path, starter_model):
    copy = tmp_path / "my-model.gguf"
    os.link(starter_model, copy) if os.stat(starter_model).st_dev == os.stat(tmp_path).st_dev else copy.write_bytes(starter_model.read_bytes())
    added = hub_runtime.request(methods.MODELS_ADD, ModelsAddParams(str(copy)), timeout=60)
    assert added.source == "added" and added.quantization == "Q4_1" and added.context_length == 8192
    models = hub_runtime.request(methods.MODELS_LIST, timeout=60).models
    assert added.id in [m.id for m in models]
    hub_runtime.request(methods.MODELS_REMOVE, ModelsRemoveParams(added.id, delete_file=False), timeout=60)
    assert copy.exists()
    models = hub_runtime.request(methods.MODELS_LIST, timeout=60).models
    assert added.id not in [m.id for m in models]
