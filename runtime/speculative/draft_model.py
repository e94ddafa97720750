"""A small model with the target's tokenizer, run in its own llama.cpp context, drafting a few tokens ahead.

Its KV cache follows the conversation like the target's: before each draft it is
rewound to the longest prefix it shares with the accepted tokens, and only what
is new (usually the one or two tokens accepted last round) is evaluated.
"""

from __future__ import annotations

import time

import numpy as np

from runtime.llama.llama_model import KvSequence
from runtime.llama.sampling import Sampler, SamplingConfig
from runtime.speculative.acceptance import Proposal
from runtime.speculative.costs import CATCH_UP_TOKENS

# Greedy drafting stops early when the draft model is unsure of its own next token: such tokens are rarely accepted.
MIN_CONFIDENCE = 0.4


class DraftModel:
    def __init__(self, model: KvSequence):
        self.model = model
        self._fresh = False  # the context's last logits belong to model.tokens[-1]
        # What the last draft cost, for the controller: (sync seconds, decode steps, seconds in those steps).
        self.last_timing: tuple[float | None, int, float] = (0.0, 0, 0.0)
        # The last sync that evaluated more than CATCH_UP_TOKENS tokens: (tokens, seconds), for the cost model.
        self.last_catch_up: tuple[int, float] | None = None

    def behind(self, history: list[int]) -> int:
        """How many of `history`'s tokens a sync would evaluate."""
        return max(1, len(history) - self.model.common_prefix(history)) if not self.synced(history) else 0

    def synced(self, history: list[int]) -> bool:
        return self._fresh and self.model.tokens == history

    def sync(self, history: list[int]) -> None:
        """Make the draft's cache hold `history`, with the logits of its last token ready."""
        model = self.model
        if self.synced(history):
            return
        n = model.common_prefix(history)
        if n == len(history):
            n -= 1  # the last token is evaluated again for its logits
        model.truncate(n)
        self._fresh = False
        started = time.perf_counter()
        new = history[len(model.tokens) :]
        model.decode_all(new)
        self._fresh = True
        if len(new) > CATCH_UP_TOKENS:
            self.last_catch_up = (len(new), time.perf_counter() - started)

    def draft(self, history: list[int], k: int, sampling: SamplingConfig, sampler: Sampler | None) -> tuple[list[int], list[Proposal]]:
        """Up to k tokens following `history`, with the distribution each was drawn from (None when greedy)."""
        model = self.model
        room = model.n_ctx - len(history)
        k = min(k, room)
        if k <= 0:
            return [], []
        started = time.perf_counter()
        behind = self.behind(history)
        self.sync(history)
        synced = time.perf_counter()
        # Catching up after plain steps is a one-off, not the per-round cost the controller weighs.
        sync_seconds = synced - started if behind <= CATCH_UP_TOKENS else None
        tokens: list[int] = []
        proposals: list[Proposal] = []
        steps = 0
        for i in range(k):
            logits = model.logits(-1)
            if sampling.greedy:
                token = int(np.argmax(logits))
                if i > 0 and _top_probability(logits, token) < MIN_CONFIDENCE:
                    break
                proposals.append(None)
            else:
                assert sampler is not None  # a draft that samples comes with its sampler (None only when greedy)
                ids, probs = sampler.distribution(logits)
                token = sampler.choose(ids, probs)
                proposals.append((ids, probs))
            tokens.append(token)
            if i + 1 < k:
                model.decode((token,))
                steps += 1
        # Steps taken, not tokens kept: a draft cut short by an unsure token still timed its step. Counted by
        # tokens, a probe of 2 that kept 1 measured nothing, and a draft model that could never pay was probed
        # again and again, each time catching up on every token since (story, one thread: 0.80 of plain).
        self.last_timing = (sync_seconds, steps, time.perf_counter() - synced)
        return tokens, proposals

    def close(self) -> None:
        self.model.close()


def _top_probability(logits: np.ndarray, token: int) -> float:
    shifted = logits - logits[token]
    return float(1.0 / np.exp(shifted).sum())
