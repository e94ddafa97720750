"""bench/lockstep_host.py's `+seats` host makes its context as the runtime makes one by default, so what it measures
is the runtime's shape and stays so if the runtime's changes."""

from __future__ import annotations

import sys
from pathlib import Path

import llama_cpp
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from decode_host import bench_context  # noqa: E402
from lockstep_host import RUNTIME_SEATS, valid_host  # noqa: E402

from runtime.gguf.reader import read_file_header  # noqa: E402
from runtime.llama.llama_model import LlamaModel, LoadSettings  # noqa: E402
from runtime.protocol import ModelLoadParams  # noqa: E402

pytestmark = pytest.mark.slow


def shape(ctx) -> tuple[int, int, int, int]:
    return llama_cpp.llama_n_ctx(ctx), llama_cpp.llama_n_seq_max(ctx), llama_cpp.llama_n_batch(ctx), llama_cpp.llama_n_ubatch(ctx)


def test_the_seats_host_shapes_its_context_as_a_default_load_does(starter_model):
    defaults = ModelLoadParams(path=str(starter_model))
    assert RUNTIME_SEATS == defaults.n_seq
    settings = LoadSettings(path=str(starter_model), n_ctx=4096, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=1, n_seq=defaults.n_seq)
    runtime = LlamaModel(settings, read_file_header(starter_model))
    try:
        expected = shape(runtime._ctx.ctx)
    finally:
        runtime.close()
    ctx, _ = bench_context(llama_cpp, str(starter_model), 1, 446, seats=RUNTIME_SEATS)
    try:
        assert shape(ctx) == expected == (4096 * RUNTIME_SEATS, RUNTIME_SEATS + 1, 512, 512)
    finally:
        llama_cpp.llama_free(ctx)
    plain, _ = bench_context(llama_cpp, str(starter_model), 1, 446)
    try:
        n_ctx, n_seq_max, _, _ = shape(plain)
        assert (n_seq_max, 446 <= n_ctx <= 512) == (1, True)  # llama-bench's shape: one sequence, the run's cells (padded to 256)
    finally:
        llama_cpp.llama_free(plain)


def test_seats_is_a_python_host_suffix():
    assert valid_host("python+split+seats") and valid_host("python-bindings+seats")
    assert not valid_host("c-peer+seats")
