"""How long a draft model's drafts keep being right: the chance of a rejection at each position of a draft, learnt as it goes.

A small model's draft is more often wrong the further it runs from what the
target has seen, so the chance of a rejection is not the same at every position.
Positions are grouped in buckets that double in width (1, 2, 3-4, 5-8, ...
33-64, 65+); each keeps, decayed per draft that reached it, how many drafted
tokens reached it (were judged) and how many of those were rejected. A bucket no
draft reaches keeps what it knew (at first, the prior). S(m), the chance that a
draft's first m tokens are all accepted, is the product of (1 - rejection rate)
over positions 1..m. (Prompt lookup's drafts are copies, learnt by how long the
copy has run instead: copy_runs.py.)
"""

from __future__ import annotations

DECAY = 0.9  # per draft that reached the bucket: the estimate follows the last ten or so
PRIOR_POSITIONS = 2.0  # pseudo-observations per bucket, at the prior's rate
BUCKET_STARTS = (1, 2, 3, 5, 9, 17, 33, 65)


def bucket(position: int) -> int:
    """Which bucket a 1-based draft position falls in."""
    b = 0
    while b + 1 < len(BUCKET_STARTS) and position >= BUCKET_STARTS[b + 1]:
        b += 1
    return b


def _width(b: int, upto: int) -> int:
    """How many positions 1..upto fall in bucket b."""
    start = BUCKET_STARTS[b]
    end = BUCKET_STARTS[b + 1] - 1 if b + 1 < len(BUCKET_STARTS) else upto
    return max(0, min(end, upto) - start + 1)


class RunLengths:
    def __init__(self, first_rate: float, later_rate: float | None = None):
        """The prior chance that a drafted token is accepted: `first_rate` at the first position, `later_rate`
        (default the same) at every later one, until measured."""
        later_rate = first_rate if later_rate is None else later_rate
        self.judged = [PRIOR_POSITIONS] * len(BUCKET_STARTS)
        self.rejected = [PRIOR_POSITIONS * (1.0 - first_rate)] + [PRIOR_POSITIONS * (1.0 - later_rate)] * (len(BUCKET_STARTS) - 1)

    def rejection_rate(self, b: int) -> float:
        return min(1.0, self.rejected[b] / self.judged[b])

    def survival(self, k: int) -> list[float]:
        """S(1) .. S(k): the chance that a draft's first m tokens are all accepted."""
        out = []
        s = 1.0
        for m in range(1, k + 1):
            s *= 1.0 - self.rejection_rate(bucket(m))
            out.append(s)
        return out

    def observe(self, drafted: int, accepted: int) -> None:
        """A draft of `drafted` tokens whose first `accepted` were accepted (the next one, if any, rejected)."""
        judged = min(accepted + 1, drafted)
        for b in range(len(BUCKET_STARTS)):
            reached = _width(b, judged)
            if reached:
                self.judged[b] = self.judged[b] * DECAY + reached
                self.rejected[b] *= DECAY
        if accepted < drafted:
            self.rejected[bucket(accepted + 1)] += 1.0
