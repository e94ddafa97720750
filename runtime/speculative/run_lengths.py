"""How long a draft model's drafts keep being right: the chance of a rejection at each position of a draft, learnt as it goes.

A small model's draft is more often wrong the further it runs from what the
target has seen, so the chance of a rejection is not the same at every position.
Positions are grouped in buckets that double in width (1, 2, 3-4, 5-8, ...
33-64, 65+), learnt as break_rates.py does for both drafters. S(m), the chance
that a draft's first m tokens are all accepted, is the product of (1 - rejection
rate) over positions 1..m. (Prompt lookup's drafts are copies, learnt by how
long the copy has run instead: copy_runs.py.)
"""

from __future__ import annotations

from runtime.speculative.break_rates import BreakRates

PRIOR_POSITIONS = 2.0  # pseudo-observations per bucket, at the prior's rate
BUCKET_STARTS = (1, 2, 3, 5, 9, 17, 33, 65)


class RunLengths:
    def __init__(self, first_rate: float, later_rate: float | None = None):
        """The prior chance that a drafted token is accepted: `first_rate` at the first position, `later_rate`
        (default the same) at every later one, until measured."""
        later_rate = first_rate if later_rate is None else later_rate
        prior = [1.0 - first_rate] + [1.0 - later_rate] * (len(BUCKET_STARTS) - 1)
        self._rates = BreakRates(BUCKET_STARTS, prior, PRIOR_POSITIONS)

    def survival(self, k: int) -> list[float]:
        """S(1) .. S(k): the chance that a draft's first m tokens are all accepted."""
        return self._rates.survival(1, k)

    def observe(self, drafted: int, accepted: int) -> None:
        """A draft of `drafted` tokens whose first `accepted` were accepted (the next one, if any, rejected)."""
        self._rates.observe(1, drafted, accepted)
