"""The embedding model beside the chat model: embedding.load / embedding.unload (runtime/embeddings)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EmbeddingLoadParams:
    path: str  # a GGUF embedding model (bge, nomic-embed...); a chat model works too, mean-pooled
    n_threads: int = 0  # 0: every core while no reply is on its way, half of them while one is (the chat model has the rest)


@dataclass
class EmbeddingLoadResult:
    name: str
    path: str
    identity: str  # the file's identity (runtime/models/identity.py): what stored vectors are keyed by
    dimensions: int
    n_ctx: int  # the most tokens one text may have


@dataclass
class EmbeddingUnloadResult:
    unloaded: bool
