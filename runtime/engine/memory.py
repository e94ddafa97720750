"""How much memory a model load takes, estimated from its GGUF header before anything is loaded."""

from __future__ import annotations

from dataclasses import dataclass

import psutil

from runtime.gguf.reader import GGUFHeader

# llama.cpp's compute buffer holds one micro-batch's activations plus its logits
# (n_ubatch x n_vocab floats); the activations term is a rough multiple of the
# embedding width seen across llama-family models.
ACTIVATION_FLOATS_PER_EMBD = 12


@dataclass(frozen=True)
class MemoryEstimate:
    weights: int
    kv_cache: int
    compute: int

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.compute


def estimate_load(header: GGUFHeader, n_ctx: int, type_k: str = "f16", type_v: str = "f16", n_ubatch: int = 512) -> MemoryEstimate:
    weights = header.tensor_bytes
    kv = header.kv_bytes_per_token(type_k, type_v) * n_ctx
    n_embd = int(header.arch_value("embedding_length", 0) or 0)
    n_ubatch = min(n_ubatch, n_ctx)
    compute = 4 * n_ubatch * (header.vocab_size + ACTIVATION_FLOATS_PER_EMBD * n_embd)
    return MemoryEstimate(weights=weights, kv_cache=kv, compute=compute)


def available_ram() -> int:
    return psutil.virtual_memory().available


def rss_bytes() -> int:
    return psutil.Process().memory_info().rss
