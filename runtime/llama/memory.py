"""How much memory a model load takes, estimated from its GGUF header before anything is loaded,
and the one verdict on whether it fits (`fit_verdict`): `model.load` refuses what it says is too big,
and the catalog labels each quantization with it, so the two never disagree.

GPU offload (`layer_costs`, `offload_layers`): Auto puts as many layers on the GPU as fit its free
memory less a margin for the desktop. The costs are per layer, in the order llama.cpp offloads them
(src/llama-model.cpp, load_tensors: with n_gpu_layers = k the output layer and the last k-1 blocks go
to the GPU, the input embeddings never do): each block's weights from the GGUF tensor table with its
share of the KV cache at the chosen n_ctx x n_seq, the output layer's weights, and the compute buffer,
which the device holds as soon as it holds one layer. The estimate can be short (drivers round
allocations up, backends keep scratch buffers), so the engine steps down when llama.cpp still fails.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from typing import Literal, Sequence

import psutil

from runtime.gguf.reader import KV_TYPE_BYTES, GGUFHeader
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
# SmolLM2-135M Q4_1 and Qwen2.5-Coder-0.5B Q4_K_M; tests/runtime/llama/test_memory_estimate.py
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


def estimate_load(header: GGUFHeader, n_ctx: int, type_k: str = "f16", type_v: str = "f16", n_ubatch: int = 512, flash_attn: bool = True) -> MemoryEstimate:
    """`flash_attn` False: llama.cpp computes attention as matrix products, keeping a micro-batch's attention scores
    over every cell of the cache (n_ubatch x n_ctx x heads floats; with flash attention, tiles of them): in the
    compute buffer, and touched by a prompt evaluated at the end of a full cache."""
    weights = header.tensor_bytes
    kv = header.kv_bytes_per_token(type_k, type_v) * n_ctx
    n_embd = int(header.arch_value("embedding_length", 0) or 0)
    n_ubatch = min(n_ubatch, n_ctx)
    compute = 4 * n_ubatch * (header.vocab_size + ACTIVATION_FLOATS_PER_EMBD * n_embd)
    n_ff = _first_int(header.arch_value("feed_forward_length", 0))
    resident = RESIDENT_BYTES_PER_VOCAB_TOKEN * header.vocab_size
    workspace = 4 * n_ubatch * (PREFILL_FLOATS_PER_EMBD * n_embd + PREFILL_FLOATS_PER_FF * n_ff)
    if not flash_attn:
        scores = 4 * n_ubatch * n_ctx * header.n_head
        compute += scores
        workspace += scores
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


# Kept free on a GPU for the desktop, the compositor and other programs: Auto never plans into it. A fixed part
# (a desktop session's own buffers) and a share of the device (browsers and other apps grow with the screen).
DESKTOP_MARGIN_BYTES = 512 * 2**20
DESKTOP_MARGIN_FRACTION = 0.05

_BLOCK = re.compile(r"blk\.(\d+)\.")
_OUTPUT_TENSORS = ("output.weight", "output.bias", "output_norm.weight", "output_norm.bias")


def desktop_margin(memory_total: int) -> int:
    return DESKTOP_MARGIN_BYTES + int(DESKTOP_MARGIN_FRACTION * memory_total)


@dataclass(frozen=True)
class LayerCosts:
    """Bytes each offloadable layer takes on a GPU device (weights and its KV cache), and the compute buffer."""

    blocks: tuple[int, ...]  # the repeating layers, block 0 first
    output: int  # the output layer: its norm and matrix (a copy of the embeddings when the model ties them)
    compute: int  # the compute buffer on the device, there as soon as one layer is

    @property
    def layers_total(self) -> int:
        """Layers as llama.cpp counts them ("offloaded 31/31 layers"): the blocks and the output layer."""
        return len(self.blocks) + 1

    def device_bytes(self, layers: int) -> int:
        """What `layers` offloaded layers take on the device: the output layer first, then blocks from the last."""
        layers = max(0, min(layers, self.layers_total))
        if layers == 0:
            return 0
        blocks = sum(self.blocks[len(self.blocks) - (layers - 1):]) if layers > 1 else 0
        return self.compute + self.output + blocks


def layer_costs(header: GGUFHeader, n_ctx_total: int, type_k: str = "f16", type_v: str = "f16", n_ubatch: int = 512) -> LayerCosts:
    """Per-layer device bytes for a context of `n_ctx_total` cells (n_ctx x n_seq: every sequence may fill n_ctx)."""
    n_blocks = header.n_layers
    weights = [0] * n_blocks
    output = 0
    tied = True
    for tensor in header.tensors:
        match = _BLOCK.match(tensor.name)
        if match and int(match.group(1)) < n_blocks:
            weights[int(match.group(1))] += tensor.n_bytes
        elif tensor.name in _OUTPUT_TENSORS:
            output += tensor.n_bytes
            tied = tied and tensor.name != "output.weight"
    if tied:  # no output matrix of its own: llama.cpp copies the token embeddings to the output layer's device
        output += sum(t.n_bytes for t in header.tensors if t.name == "token_embd.weight")
    per_token = [n_kv * (header.key_length * KV_TYPE_BYTES[type_k] + header.value_length * KV_TYPE_BYTES[type_v]) for n_kv in header.n_head_kv_per_layer()]
    per_token += [0] * (n_blocks - len(per_token))
    blocks = tuple(int(w + per_token[i] * n_ctx_total) for i, w in enumerate(weights))
    compute = estimate_load(header, n_ctx_total, type_k, type_v, n_ubatch).compute
    return LayerCosts(blocks=blocks, output=output, compute=compute)


def offload_layers(costs: LayerCosts, budget: int) -> int:
    """Auto's decision: the most layers whose device bytes fit `budget` (free memory less the margin); 0 if not one does."""
    layers = 0
    for n in range(1, costs.layers_total + 1):
        if costs.device_bytes(n) > budget:
            break
        layers = n
    return layers


def step_down(layers: int) -> int:
    """The next, smaller layer count to try when llama.cpp could not allocate `layers` (ends at 0: the CPU)."""
    return max(0, layers - max(1, layers // 4))


def split_layers(layers: int, frees: Sequence[int]) -> list[int]:
    """How llama.cpp splits `layers` offloaded layers across devices by default: in proportion to each one's
    free memory, contiguous runs, the first device taking the earliest layers (src/llama-model.cpp)."""
    if not frees:
        return []
    if layers <= 0:
        return [0] * len(frees)
    weights = [float(f) for f in frees] if sum(frees) > 0 else [1.0] * len(frees)
    bounds, running = [], 0.0
    for w in weights:
        running += w
        bounds.append(running / sum(weights))
    counts = [0] * len(frees)
    for i in range(layers):
        position = i / layers
        counts[next((d for d, b in enumerate(bounds) if position < b), len(frees) - 1)] += 1
    return counts


def _first_int(value) -> int:
    if isinstance(value, list):  # per-layer values (some architectures vary the FFN width)
        return max((int(v) for v in value), default=0)
    return int(value or 0)


def available_ram() -> int:
    return psutil.virtual_memory().available


def rss_bytes() -> int:
    return psutil.Process().memory_info().rss


def with_projector(estimate: MemoryEstimate, projector_bytes: int) -> MemoryEstimate:
    """A vision model loaded with its multimodal projector: the projector's weights sit beside the model's (on the
    GPU by default, as llama.cpp offloads them). Its image encoder's own compute buffer is not counted: it depends
    on the image size and is released between images."""
    return dataclasses.replace(estimate, weights=estimate.weights + projector_bytes)


def projector_bytes(mmproj: str | None) -> int:
    """The projector's size on disk (its weights, loaded beside the model's); 0 without one, or when it is gone (the load says so)."""
    try:
        return os.path.getsize(mmproj) if mmproj else 0
    except OSError:
        return 0
