"""The acceptance rule alone, on a small made-up vocabulary: whatever q drafts, the emitted token is distributed as p.

Many draws make this sensitive: with N = 8000 over 8 tokens, the chi-square
bound at 1 - 1e-3 (7 degrees of freedom: 24.3) is exceeded by any distortion
whose total variation exceeds sqrt(24.3 / 4N) = 0.028 (chi2 >= 4 N TV^2), and an
exact rule fails one run in a thousand.
"""

from __future__ import annotations

import numpy as np
import pytest

from runtime.llama.sampling import Sampler, SamplingConfig
from runtime.speculative.acceptance import judge

N = 8000
CHI2_999_DF7 = 24.32  # tabulated
LOGITS = np.array([2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -3.0], dtype=np.float32)
CONFIG = SamplingConfig(temperature=1.0, top_p=1.0, top_k=0, seed=1)


def target_p() -> np.ndarray:
    ids, probs = Sampler(CONFIG).distribution(LOGITS)
    p = np.zeros(len(LOGITS))
    p[ids] = probs
    return p


def chi2(counts: np.ndarray, p: np.ndarray) -> float:
    expected = p * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.parametrize("q", [np.array([0.05, 0.05, 0.1, 0.1, 0.2, 0.2, 0.2, 0.1]), np.full(8, 1 / 8)], ids=["skewed", "uniform"])
def test_sampled_drafts_leave_p_intact(q):
    sampler = Sampler(CONFIG)
    rng = np.random.default_rng(2)
    ids = np.arange(8)
    counts = np.zeros(8)
    rejected = 0
    for _ in range(N):
        drafted = int(rng.choice(8, p=q))
        verdict = judge(sampler, LOGITS, drafted, (ids, q))
        counts[verdict.token] += 1
        rejected += not verdict.accepted
    assert 0 < rejected < N
    assert chi2(counts, target_p()) < CHI2_999_DF7


@pytest.mark.parametrize("drafted", [0, 3, 7])
def test_deterministic_drafts_leave_p_intact(drafted):
    sampler = Sampler(CONFIG)
    counts = np.zeros(8)
    for _ in range(N):
        counts[judge(sampler, LOGITS, drafted, None).token] += 1
    assert chi2(counts, target_p()) < CHI2_999_DF7


def test_greedy_accepts_only_the_argmax():
    sampler = Sampler(SamplingConfig(temperature=0.0))
    assert judge(sampler, LOGITS, 0, None).accepted
    verdict = judge(sampler, LOGITS, 3, None)
    assert not verdict.accepted and verdict.token == 0
