"""A vision model's projector through the real runtime and the loopback hub: a level's download brings the
projector (one download, one progress), the fit counts it, the local model list shows it as the model's
`mmproj` (never as a model of its own), and `with_mmproj=False` takes the text model alone."""

from __future__ import annotations

import os

import pytest

from runtime.protocol import DownloadStartParams, HubQuantsParams, ModelsAddParams, methods
from sample_repos import SMOL_REPO, VISION_FILE, VISION_MMPROJ, VISION_MMPROJ_Q8, VISION_REPO
from test_runtime_hub import wait_for_download

pytestmark = pytest.mark.slow


def test_a_vision_level_downloads_its_projector_and_lists_it_with_the_model(hub_runtime, hub, starter_model):
    projector = hub.repos[VISION_REPO].files[VISION_MMPROJ]
    info = hub_runtime.request(methods.DOWNLOAD_START, DownloadStartParams(VISION_REPO, "Q4_1"), timeout=60)
    # The preferred precision (f16 over Q8_0), after the model, in the same download and the same progress.
    assert info.files == [VISION_FILE, VISION_MMPROJ]
    assert info.bytes_total == starter_model.stat().st_size + projector.size
    done = wait_for_download(hub_runtime, info.id)
    assert done.state == "done", done.error
    assert [os.path.basename(p) for p in done.paths] == [VISION_FILE, VISION_MMPROJ] and all(os.path.exists(p) for p in done.paths)
    # One progress for both files (a small projector may finish between two throttled notifications).
    assert any(m == "download.progress" and d["id"] == info.id and d["current_file"] in (VISION_FILE, VISION_MMPROJ) for m, d in hub_runtime.notes)

    models = [m for m in hub_runtime.request(methods.MODELS_LIST, timeout=60).models if m.repo == VISION_REPO]
    assert [os.path.basename(m.path) for m in models] == [VISION_FILE]  # the projector is not a model
    assert models[0].mmproj is not None and os.path.basename(models[0].mmproj) == VISION_MMPROJ

    levels = hub_runtime.request(methods.HUB_QUANTS, HubQuantsParams(VISION_REPO), timeout=120).levels
    assert [lv.name for lv in levels] == ["Q4_1"] and levels[0].downloaded
    assert (levels[0].mmproj, levels[0].mmproj_size) == (VISION_MMPROJ, projector.size)


def test_the_fit_of_a_vision_level_counts_its_projector(hub_runtime, hub):
    """The same model file with and without a projector: the vision repository's fit is larger by the projector."""
    projector = hub.repos[VISION_REPO].files[VISION_MMPROJ]
    [vision] = hub_runtime.request(methods.HUB_QUANTS, HubQuantsParams(VISION_REPO), timeout=120).levels
    text = next(lv for lv in hub_runtime.request(methods.HUB_QUANTS, HubQuantsParams(SMOL_REPO), timeout=120).levels if lv.name == "Q4_1")
    assert vision.fit is not None and text.fit is not None
    assert vision.fit.weights - text.fit.weights == projector.size
    assert vision.fit.ram_needed - text.fit.ram_needed == projector.size
    assert f"vision projector {VISION_MMPROJ}" in vision.fit.detail and "projector" not in text.fit.detail
    assert not vision.downloaded  # nothing is on disk yet


def test_without_the_projector_and_with_a_chosen_one(hub_runtime, hub, starter_model):
    text_only = hub_runtime.request(methods.DOWNLOAD_START, DownloadStartParams(VISION_REPO, "Q4_1", with_mmproj=False), timeout=60)
    assert text_only.files == [VISION_FILE] and text_only.bytes_total == starter_model.stat().st_size
    assert wait_for_download(hub_runtime, text_only.id).state == "done"
    # Named files are taken as they are (a projector of another precision, on its own): the model is not fetched again.
    chosen = hub_runtime.request(methods.DOWNLOAD_START, DownloadStartParams(VISION_REPO, files=[VISION_MMPROJ_Q8]), timeout=60)
    assert chosen.files == [VISION_MMPROJ_Q8]
    assert wait_for_download(hub_runtime, chosen.id).state == "done"
    [model] = [m for m in hub_runtime.request(methods.MODELS_LIST, timeout=60).models if m.repo == VISION_REPO]
    assert os.path.basename(model.mmproj or "") == VISION_MMPROJ_Q8
    # With both on disk, the model's projector is the one a download would choose.
    both = hub_runtime.request(methods.DOWNLOAD_START, DownloadStartParams(VISION_REPO, files=[VISION_MMPROJ]), timeout=60)
    assert wait_for_download(hub_runtime, both.id).state == "done"
    [model] = [m for m in hub_runtime.request(methods.MODELS_LIST, timeout=60).models if m.repo == VISION_REPO]
    assert os.path.basename(model.mmproj or "") == VISION_MMPROJ


def test_a_projector_in_a_folder_of_the_users_is_not_guessed_to_belong_to_a_model(hub_runtime, hub, starter_model, tmp_path):
    """Only a repository's snapshot pairs a model with the projector beside it: a folder of one's own may hold several models."""
    folder = tmp_path / "my-models"
    folder.mkdir()
    (folder / "model.gguf").symlink_to(starter_model)
    (folder / VISION_MMPROJ).write_bytes(hub.repos[VISION_REPO].files[VISION_MMPROJ].read(0, 1 << 16))
    added = hub_runtime.request(methods.MODELS_ADD, ModelsAddParams(str(folder / "model.gguf")), timeout=60)
    assert added.mmproj is None
