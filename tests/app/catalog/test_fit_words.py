"""The fit badge's tooltip, said by the window from the runtime's figures (protocol 1.12) in its own language:
the runtime's `MemoryFit.detail` is English, and no longer shown."""

from __future__ import annotations

from app.catalog.table_model import fit_detail
from app.formatting import human_size
from runtime.gguf.reader import read_file_header
from runtime.hub import fit
from runtime.llama.memory import estimate_load
from runtime.protocol import Device, QuantLevel

GPU = Device("Test GPU", "gpu", 8 << 30, 6 << 30)
SMALL_GPU = Device("Small GPU", "gpu", 256 << 20, 100 << 20)


def level(judged, **more) -> QuantLevel:
    return QuantLevel("Q4_1", ["model-Q4_1.gguf"], judged.weights, [None], judged, **more)


def test_each_verdict_says_what_is_needed_of_what_against_what_is_free(english, starter_model):
    estimate = estimate_load(read_file_header(starter_model), 4096)
    on_gpu = fit.judge(estimate, [GPU], 1 << 30)
    assert on_gpu.label == "gpu" and on_gpu.gpu_free == 6 << 30
    assert fit_detail(level(on_gpu)) == (
        f"Fits on the GPU: {human_size(on_gpu.gpu_needed)} (weights {human_size(estimate.weights)} + KV cache {human_size(estimate.kv_cache)} "
        f"+ compute {human_size(estimate.compute)}) of {human_size(6 << 30)} free")

    in_ram = fit.judge(estimate, [SMALL_GPU], 4 << 30)
    first, gpu_line = fit_detail(level(in_ram)).split("\n")
    assert first.startswith(f"Fits in RAM: {human_size(in_ram.ram_needed)} (weights ") and first.endswith(f"of {human_size(4 << 30)} available")
    assert f"+ compute {human_size(in_ram.ram_needed - in_ram.weights - in_ram.kv_cache)})" in first  # the peak in RAM, not the GPU buffer
    assert gpu_line == f"The GPU has {human_size(100 << 20)} free; all layers need {human_size(in_ram.gpu_needed)} there"

    too_big = fit.judge(estimate, [], 100 << 20)
    said = fit_detail(level(too_big))
    assert said.startswith(f"Too big: it needs {human_size(too_big.ram_needed)}") and said.endswith(f"has {human_size(100 << 20)} of RAM available")
    assert "GPU" not in said  # a machine without one is not told about it


def test_what_is_counted_in_with_the_level_is_said_too(english, starter_model):
    judged = fit.judge(estimate_load(read_file_header(starter_model), 4096), [], 16 << 30)
    judged.draft = "SmolLM2 135M"
    said = fit_detail(level(judged, mmproj="mmproj-f16.gguf", mmproj_size=851_000_000)).split("\n")
    assert said[1:] == ["The vision projector mmproj-f16.gguf (851.0 MB) is counted in", "The draft model SmolLM2 135M is counted in"]
    judged.draft, judged.draft_unknown = "", "lokal-test/nope: no such repository"
    assert fit_detail(level(judged)).endswith("\nThe draft model is not counted in, its size is unknown: lokal-test/nope: no such repository")


def test_in_indonesian_the_tooltip_is_indonesian(indonesian, starter_model):
    estimate = estimate_load(read_file_header(starter_model), 4096)
    said = fit_detail(level(fit.judge(estimate, [SMALL_GPU], 4 << 30)))
    assert said.startswith("Muat di RAM: ") and "bobot" in said and "GPU memiliki" in said, said
    for english in ("Fits", "weights", "available", "free", "layers"):
        assert english not in said
    assert fit_detail(level(fit.judge(estimate, [], 100 << 20))).startswith("Terlalu besar: butuh ")


def test_the_level_table_shows_the_window_s_words_not_the_runtime_s(indonesian, starter_model):
    from PySide6.QtCore import Qt

    from app.catalog.table_model import QuantModel

    judged = fit.judge(estimate_load(read_file_header(starter_model), 4096), [], 16 << 30)
    assert judged.detail.startswith("fits in RAM")  # the runtime's English, for logs and older clients
    levels = QuantModel()
    levels.set_rows([level(judged)])
    assert levels.data(levels.index(0, 2), Qt.ItemDataRole.ToolTipRole) == fit_detail(level(judged))
    assert levels.data(levels.index(0, 2), Qt.ItemDataRole.ToolTipRole).startswith("Muat di RAM")
