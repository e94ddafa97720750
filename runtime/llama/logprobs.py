"""A reply token's log-probability and the most likely tokens at its position, from the logits row it was sampled from.

The distribution is the model's own, a softmax of the raw logits: what OpenAI and
llama-server report, and the same whether the token was sampled alone or accepted
from a speculative draft (its row then comes from the verifying pass).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from runtime.protocol import TokenChoice, TokenLogprob

# OpenAI's floor for a token the model all but rules out; JSON has no -Infinity.
FLOOR = -9999.0


class LogprobReader:
    """Reads the log-probabilities of one reply's tokens, naming tokens with `piece` (their bytes, special tokens spelled out)."""

    def __init__(self, top: int, piece: Callable[[int], bytes]):
        self.top = top
        self._piece = piece

    def read(self, row: np.ndarray, token: int) -> TokenLogprob:
        peak = float(row.max())
        # float64 for the sum: 152k terms of float32 would lose the small ones.
        log_total = peak + math.log(float(np.exp(row - peak).sum(dtype=np.float64)))
        top: list[TokenChoice] = []
        if self.top > 0:
            best = np.argpartition(row, -self.top)[-self.top :]
            ranked = sorted(best.tolist(), key=lambda t: (-float(row[t]), t))
            top = [self._choice(t, float(row[t]) - log_total) for t in ranked]
        chosen = self._choice(token, float(row[token]) - log_total)
        return TokenLogprob(chosen.token_id, chosen.text, chosen.bytes, chosen.logprob, top)

    def _choice(self, token: int, logprob: float) -> TokenChoice:
        data = self._piece(token)
        return TokenChoice(token, data.decode("utf-8", errors="replace"), list(data), max(logprob, FLOOR) if math.isfinite(logprob) else FLOOR)
