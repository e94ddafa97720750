"""The speculative sampling rule: keeps the target's output distribution exact whatever the draft.

A drafted token d, drawn from the drafter's distribution q, is accepted with
probability min(1, p(d) / q(d)); on rejection the replacement is drawn from
norm(max(0, p - q)). Then every emitted token is distributed as p. A
deterministic draft (prompt lookup, a greedy draft model) has q = 1 on its token.
Under greedy decoding p is one-hot on the argmax, and the rule reduces to
"accept d iff it is the argmax; otherwise emit the argmax". p is the sampler
chain's distribution given the accepted prefix (runtime/llama/sampling.py), so
a token the grammar rejects has p = 0 and is never accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runtime.llama.sampling import Sampler

# The drafter's distribution at one position: (token ids, probabilities); None for a deterministic draft.
Proposal = tuple[np.ndarray, np.ndarray] | None


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    token: int  # the drafted token if accepted, else its replacement


def judge(sampler: Sampler, logits: np.ndarray, drafted: int, proposal: Proposal) -> Verdict:
    if sampler.greedy:
        best = sampler.sample(logits)  # the argmax after logit bias, penalties and grammar
        return Verdict(best == drafted, best)
    p_ids, p_probs = sampler.distribution(logits)
    p = float(p_probs[p_ids == drafted].sum())
    if proposal is None:
        q = 1.0
        q_at = np.where(p_ids == drafted, 1.0, 0.0)
    else:
        q_ids, q_probs = proposal
        q = float(q_probs[q_ids == drafted].sum())
        q_at = _lookup(q_ids, q_probs, p_ids)
    if q > 0.0 and sampler.uniform() < min(1.0, p / q):
        return Verdict(True, drafted)
    residual = np.maximum(p_probs - q_at, 0.0)
    total = residual.sum()
    if total <= 0.0:  # p <= q everywhere means p == q: a rejection had probability 0, only rounding gets here
        return Verdict(False, sampler.choose(p_ids, p_probs))
    return Verdict(False, sampler.choose(p_ids, residual / total))


def _lookup(ids: np.ndarray, probs: np.ndarray, at: np.ndarray) -> np.ndarray:
    """probs of `ids` at the token ids `at` (0 where absent)."""
    order = np.argsort(ids)
    sorted_ids = ids[order]
    pos = np.searchsorted(sorted_ids, at)
    pos = np.minimum(pos, len(sorted_ids) - 1)
    found = sorted_ids[pos] == at
    return np.where(found, probs[order][pos], 0.0)
