"""Turns a row of logits into the next token: greedy, or top-k / top-p / temperature.

The sampler is written over numpy, not llama.cpp's sampler chain, because
speculative decoding needs the full target distribution p (after the same
top-k / top-p / temperature transforms) to accept or reject drafted tokens
exactly; `distribution()` is that p.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SamplingConfig:
    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40
    seed: int | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0 or self.top_k == 1


class Sampler:
    def __init__(self, config: SamplingConfig):
        self.config = config
        self.rng = np.random.default_rng(config.seed)

    def distribution(self, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(token ids, probabilities) of the candidates left after top-k, temperature and top-p."""
        cfg = self.config
        if cfg.greedy:
            return np.array([int(np.argmax(logits))]), np.array([1.0])
        n_vocab = logits.shape[0]
        if 0 < cfg.top_k < n_vocab:
            ids = np.argpartition(logits, -cfg.top_k)[-cfg.top_k:]
        else:
            ids = np.arange(n_vocab)
        scores = logits[ids].astype(np.float64) / cfg.temperature
        order = np.argsort(-scores, kind="stable")
        ids, scores = ids[order], scores[order]
        probs = np.exp(scores - scores[0])
        probs /= probs.sum()
        if cfg.top_p < 1.0:
            keep = int(np.searchsorted(np.cumsum(probs), cfg.top_p) + 1)
            ids, probs = ids[:keep], probs[:keep]
            probs = probs / probs.sum()
        return ids, probs

    def sample(self, logits: np.ndarray) -> int:
        if self.config.greedy:
            return int(np.argmax(logits))
        ids, probs = self.distribution(logits)
        return int(ids[self.rng.choice(len(ids), p=probs)])

    def choose(self, ids: np.ndarray, probs: np.ndarray) -> int:
        return int(ids[self.rng.choice(len(ids), p=probs)])

    def uniform(self) -> float:
        return float(self.rng.random())
