"""The chance that a run of drafted tokens breaks at the next one, by how far it has gone, learnt as drafts are judged.

Shared by both drafters, each with its own axis: for prompt lookup, how long the
copy has run (copy_runs.py); for the draft model, the position in the draft
(run_lengths.py). The axis is grouped in bins; each keeps how many judged tokens
reached it and how many broke there, starting from pseudo-observations at a
prior rate and decayed per draft that reached it, so the estimate follows the
current reply. A bin no draft reaches keeps what it knew. A draft whose first
token sits at x survives its first m tokens with chance
S(m) = (1 - h(x)) (1 - h(x + 1)) ... (1 - h(x + m - 1)).
"""

from __future__ import annotations

import bisect
from typing import Sequence

DECAY = 0.9  # per draft that reached the bin: the estimate follows the last ten or so


def bin_of(starts: Sequence[int], x: int) -> int:
    """The bin of x (x >= 1), bins given by their first values."""
    return max(0, bisect.bisect_right(starts, x) - 1)


class BreakRates:
    def __init__(self, starts: Sequence[int], prior_h: Sequence[float], prior_weight: float):
        self.starts = tuple(starts)
        self.judged = [prior_weight] * len(self.starts)
        self.broken = [prior_weight * h for h in prior_h]

    def hazard(self, x: int) -> float:
        b = bin_of(self.starts, x)
        return min(1.0, self.broken[b] / self.judged[b])

    def survival(self, start: int, k: int) -> list[float]:
        """S(1) .. S(k) for a draft whose first token sits at `start`."""
        out = []
        s = 1.0
        for m in range(k):
            s *= 1.0 - self.hazard(start + m)
            out.append(s)
        return out

    def observe(self, start: int, drafted: int, accepted: int) -> None:
        """A draft of `drafted` tokens from `start`, whose first `accepted` held (the next one, if any, broke)."""
        judged = min(accepted + 1, drafted)
        if judged <= 0:
            return
        first, last = bin_of(self.starts, start), bin_of(self.starts, start + judged - 1)
        for b in range(first, last + 1):
            self.judged[b] *= DECAY
            self.broken[b] *= DECAY
        for x in range(start, start + judged):
            self.judged[bin_of(self.starts, x)] += 1.0
        if accepted < drafted:
            self.broken[bin_of(self.starts, start + accepted)] += 1.0
