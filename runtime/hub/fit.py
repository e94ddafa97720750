"""Will this quantization fit on this machine? Decided from the GGUF header, before any download.

Memory is weights + KV cache at the chosen context and KV type + the compute
buffer (runtime/llama/memory.py: the KV term uses key_length and value_length
from the metadata, since head_dim is not always n_embd / n_head). The label is
memory.fit_verdict's, the same verdict `model.load` applies before it loads.
"""

from __future__ import annotations

import dataclasses

from runtime.llama.memory import MemoryEstimate, estimate_load, fit_verdict
from runtime.gguf.reader import GGUFHeader
from runtime.protocol import Device, GGUFSummary, MemoryFit

GiB = 2**30


def summarize(header: GGUFHeader) -> GGUFSummary:
    kv = header.n_head_kv_per_layer()
    return GGUFSummary(
        architecture=header.architecture,
        name=header.name,
        quantization=header.quantization,
        n_layers=header.n_layers,
        n_head_kv=max(kv) if kv else 0,
        key_length=header.key_length,
        value_length=header.value_length,
        context_length=header.context_length,
        vocab_size=header.vocab_size,
        tokenizer_model=header.tokenizer_model,
        tokenizer_pre=header.tokenizer_pre,
        bos_token_id=_int_or_none(header.metadata.get("tokenizer.ggml.bos_token_id")),
        eos_token_id=_int_or_none(header.metadata.get("tokenizer.ggml.eos_token_id")),
        kv_bytes_per_token=header.kv_bytes_per_token(),
        header_bytes=header.header_size,
        tensor_bytes=header.tensor_bytes,
        has_chat_template=header.chat_template is not None,
    )


def _int_or_none(value: object) -> int | None:
    return int(value) if isinstance(value, int) else None


def estimate_for_size(header: GGUFHeader, file_size: int, n_shards: int, n_ctx: int, type_k: str, type_v: str) -> MemoryEstimate:
    """The estimate for a level of the same model whose header was not read: its weights are its
    bytes minus the headers (levels of one repository share architecture, so the KV and compute
    terms are the same)."""
    base = estimate_load(header, n_ctx, type_k, type_v)
    weights = max(file_size - n_shards * header.header_size, 0)
    return MemoryEstimate(weights, base.kv_cache, base.compute, base.resident_overhead, base.prefill_workspace)


def together(target: MemoryEstimate, draft: MemoryEstimate) -> MemoryEstimate:
    """What a target and its draft model need loaded together: each its weights, KV cache and buffers."""
    return MemoryEstimate(*(a + b for a, b in zip(dataclasses.astuple(target), dataclasses.astuple(draft))))


def judge(estimate: MemoryEstimate, devices: list[Device], ram_available: int) -> MemoryFit:
    """The catalog's label, from the verdict `model.load` applies too (memory.fit_verdict), where it fits best."""
    verdict = fit_verdict(estimate, devices, ram_available)
    gpu_free, gpu_needed, ram_needed = verdict.gpu_free, estimate.weights + estimate.kv_cache + estimate.compute, estimate.ram_peak
    parts = f"weights {estimate.weights / GiB:.2f} + KV cache {estimate.kv_cache / GiB:.2f} + compute"
    if verdict.label == "gpu":
        detail = f"fits on the GPU: {gpu_needed / GiB:.2f} GiB ({parts} {estimate.compute / GiB:.2f}) of {gpu_free / GiB:.1f} GiB free"
    elif verdict.label == "ram":
        detail = f"fits in RAM: {ram_needed / GiB:.2f} GiB ({parts} {(ram_needed - estimate.weights - estimate.kv_cache) / GiB:.2f}) of {ram_available / GiB:.1f} GiB available"
        if verdict.has_gpu:
            detail += f"; the GPU has {gpu_free / GiB:.1f} GiB free, {gpu_needed / GiB:.2f} GiB needed for all layers"
    else:
        detail = f"too big: needs {ram_needed / GiB:.2f} GiB ({parts}), only {ram_available / GiB:.1f} GiB of RAM available"
        if verdict.has_gpu:
            detail += f" and {gpu_free / GiB:.1f} GiB of GPU memory free"
    return MemoryFit(
        weights=estimate.weights,
        kv_cache=estimate.kv_cache,
        compute=estimate.compute,
        ram_needed=ram_needed,
        gpu_needed=gpu_needed,
        label=verdict.label,
        detail=detail,
        ram_available=ram_available,
        gpu_free=gpu_free,
        has_gpu=verdict.has_gpu,
    )
