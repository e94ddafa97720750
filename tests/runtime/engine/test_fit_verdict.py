"""One fit verdict (runtime/llama/memory.py): the catalog's label and model.load's decision agree."""

from __future__ import annotations

import pytest

from runtime.engine.engine import check_fits
from runtime.llama.memory import estimate_load, with_projector
from runtime.gguf.reader import read_file_header
from runtime.hub import fit
from runtime.protocol import Device, ErrorCode, ModelLoadParams, RpcError

N_CTX = 2048
N_BATCH = 512


def load_decision(header, path, ram_available: int) -> str:
    try:
        check_fits(header, ModelLoadParams(path=str(path), n_ctx=N_CTX), N_BATCH, [], ram_available)
    except RpcError as exc:
        assert exc.code == ErrorCode.MODEL_TOO_LARGE and exc.data["where"] == "ram"
        return "too_big"
    return "ram"


def test_catalog_label_and_load_agree_for_a_model_between_the_two_old_rules(starter_model):
    """The old load rule refused anything over weights + KV + the whole compute buffer, while the catalog
    said "fits" up to the calibrated RAM peak; with RAM between the two, both now say the same."""
    header = read_file_header(starter_model)
    estimate = estimate_load(header, N_CTX, "f16", "f16", N_BATCH)
    between = (estimate.ram_peak + estimate.total) // 2
    assert estimate.ram_peak < between < estimate.total  # the case where the old rules disagreed
    for ram_available in (between, estimate.ram_peak, estimate.ram_peak - 1):
        label = fit.judge(estimate, [], ram_available).label
        assert label == load_decision(header, starter_model, ram_available), ram_available
    assert fit.judge(estimate, [], between).label == "ram"
    assert fit.judge(estimate, [], estimate.ram_peak - 1).label == "too_big"


def small_gpu(estimate) -> list[Device]:
    return [Device("gpu0", "gpu", 2**30, estimate.compute)]  # room for the compute buffer only


def test_a_cpu_load_is_not_refused_for_a_small_gpu_and_the_catalog_says_ram(starter_model):
    header = read_file_header(starter_model)
    estimate = estimate_load(header, N_CTX, "f16", "f16", N_BATCH)
    check_fits(header, ModelLoadParams(path=str(starter_model), n_ctx=N_CTX, n_gpu_layers=0), N_BATCH, small_gpu(estimate), estimate.ram_peak)
    assert fit.judge(estimate, small_gpu(estimate), estimate.ram_peak).label == "ram"


def test_a_full_offload_that_does_not_fit_the_gpu_is_refused_naming_the_gpu(starter_model):
    header = read_file_header(starter_model)
    estimate = estimate_load(header, N_CTX, "f16", "f16", N_BATCH)
    with pytest.raises(RpcError) as info:
        check_fits(header, ModelLoadParams(path=str(starter_model), n_ctx=N_CTX, n_gpu_layers=-1), N_BATCH, small_gpu(estimate), estimate.ram_peak)
    assert info.value.code == ErrorCode.MODEL_TOO_LARGE and info.value.data["where"] == "gpu"


def test_the_load_counts_a_vision_models_projector_as_the_catalog_does(starter_model, tmp_path):
    """model.load refused by the same verdict that the catalog and the window give a vision model: its projector's
    weights counted beside the model's. RAM that just holds the model alone is short for the model and projector."""
    header = read_file_header(starter_model)
    projector = tmp_path / "mmproj.gguf"
    projector.write_bytes(b"\0" * (64 << 20))  # only its size is read here
    alone = estimate_load(header, N_CTX, "f16", "f16", N_BATCH)
    check_fits(header, ModelLoadParams(path=str(starter_model), n_ctx=N_CTX), N_BATCH, [], alone.ram_peak)
    with pytest.raises(RpcError) as refused:
        check_fits(header, ModelLoadParams(path=str(starter_model), n_ctx=N_CTX, mmproj_path=str(projector)), N_BATCH, [], alone.ram_peak)
    assert refused.value.code == ErrorCode.MODEL_TOO_LARGE and refused.value.data["where"] == "ram"
    with_it = with_projector(alone, projector.stat().st_size)
    assert fit.judge(with_it, [], alone.ram_peak).label == "too_big"
    check_fits(header, ModelLoadParams(path=str(starter_model), n_ctx=N_CTX, mmproj_path=str(projector)), N_BATCH, [], with_it.ram_peak)
