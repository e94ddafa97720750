"""How much memory a model load takes, estimated from its GGUF header before anything is loaded,
and the one verdict on whether it fits (`fit_verdict`): `model.load` refuses what it says is too big,
and the catalog labels each quantization with it, so the two never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import psutil

from runtime.gguf.reader import GGUFHeader
from runtime.protocol import Device

GPU_TYPES = ("gpu", "igpu")

# llama.cpp's compute buffer holds one micro-batch's activations plus its logits
# (n_ubatch x n_vocab floats); the activations term is a rough multiple of the
# embedding width seen across llama-family models.
ACTIVATION_FLOATS_PER_EMBD = 12

# What a CPU load makes resident beyond weights and KV cache. llama.cpp allocates
# the whole compute buffer above, but on the CPU only the pages a graph touches
# count: at load that is mostly the vocabulary's tables (bytes per token), and a
# prefill then touches activations that scale with the embedding and
# feed-forward widths. Calibrated on measured RSS (runtime.metrics before/after
# model.load and after a 1381-token prefill, n_ctx 2048, llama-cpp-python 0.3.36):
# SmolLM2-135M Q4_1 and Qwen2.5-Coder-0.5B Q4_K_M; tests/runtime/engine/test_memory_estimate.py
# keeps the first within 10%.
RESIDENT_BYTES_PER_VOCAB_TOKEN = 650
PREFILL_FLOATS_PER_EMBD = 10
PREFILL_FLOATS_PER_FF = 3


@dataclass(frozen=True)
class MemoryEstimate:
    weights: int
    kv_cache: int
    compute: int  # the compute buffer llama.cpp allocates (all of it counts on a GPU)
    resident_overhead: int = 0  # CPU: what a load makes resident besides weights and KV
    prefill_workspace: int = 0  # CPU: what a full micro-batch prefill touches on top

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.compute

    @property
    def ram_at_load(self) -> int:
        """RSS growth when the model loads on the CPU."""
        return self.weights + self.kv_cache + self.resident_overhead

    @property
    def ram_peak(self) -> int:
        """RSS growth once a long prompt has been evaluated: what must fit in RAM."""
        return self.ram_at_load + self.prefill_workspace


def estimate_load(header: GGUFHeader, n_ctx: int, type_k: str = "f16", type_v: str = "f16", n_ubatch: int = 512) -> MemoryEstimate:
    weights = header.tensor_bytes
    kv = header.kv_bytes_per_token(type_k, type_v) * n_ctx
    n_embd = int(header.arch_value("embedding_length", 0) or 0)
    n_ubatch = min(n_ubatch, n_ctx)
    compute = 4 * n_ubatch * (header.vocab_size + ACTIVATION_FLOATS_PER_EMBD * n_embd)
    n_ff = _first_int(header.arch_value("feed_forward_length", 0))
    resident = RESIDENT_BYTES_PER_VOCAB_TOKEN * header.vocab_size
    workspace = 4 * n_ubatch * (PREFILL_FLOATS_PER_EMBD * n_embd + PREFILL_FLOATS_PER_FF * n_ff)
    return MemoryEstimate(weights=weights, kv_cache=kv, compute=compute, resident_overhead=resident, prefill_workspace=workspace)


@dataclass(frozen=True)
class FitVerdict:
    label: Literal["gpu", "ram", "too_big"]
    short_of: Literal["", "gpu", "ram"]  # which memory is too small, when too_big
    ram_needed: int
    ram_available: int
    gpu_needed: int  # with the share of layers judged on the GPU (the catalog: all of them)
    gpu_free: int
    has_gpu: bool


def fit_verdict(estimate: MemoryEstimate, devices: Sequence[Device], ram_available: int, gpu_share: float | None = None) -> FitVerdict:
    """Whether a model fits this machine, with `gpu_share` of its layers on the GPU (0..1).

    None asks where it fits best: all layers on the GPU if they fit there, else all in RAM (the
    catalog's label). On the GPU the whole compute buffer is allocated; in RAM what counts is the
    calibrated peak after a long prefill (`ram_peak`), not the whole compute buffer.
    """
    gpus = [d for d in devices if d.type in GPU_TYPES]
    gpu_free = sum(d.memory_free for d in gpus)
    offloadable = estimate.weights + estimate.kv_cache
    all_on_gpu = offloadable + estimate.compute
    verdict = lambda label, short_of, ram_needed, gpu_needed: FitVerdict(label, short_of, ram_needed, ram_available, gpu_needed, gpu_free, bool(gpus))
    if gpus and gpu_share != 0.0:
        share = 1.0 if gpu_share is None else gpu_share
        gpu_needed = int(share * offloadable) + estimate.compute
        if gpu_needed <= gpu_free:
            ram_needed = int((1 - share) * offloadable)
            if ram_needed <= ram_available:
                return verdict("gpu", "", ram_needed, gpu_needed)
            return verdict("too_big", "ram", ram_needed, gpu_needed)
        if gpu_share is not None:
            return verdict("too_big", "gpu", int((1 - share) * offloadable), gpu_needed)
    ram_needed = estimate.ram_peak
    if ram_needed <= ram_available:
        return verdict("ram", "", ram_needed, all_on_gpu)
    return verdict("too_big", "ram", ram_needed, all_on_gpu)


def _first_int(value) -> int:
    if isinstance(value, list):  # per-layer values (some architectures vary the FFN width)
        return max((int(v) for v in value), default=0)
    return int(value or 0)


def available_ram() -> int:
    return psutil.virtual_memory().available


def rss_bytes() -> int:
    return psutil.Process().memory_info().rss
