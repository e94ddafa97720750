"""Speculative sampling (temperature > 0) draws from exactly the target's distribution.

The exact distribution of a short continuation is enumerated from the target
itself (every sequence of the tokens the sampler chain keeps, three tokens
long, with its probability from the same chain given the tokens before it),
for top-k and for min-p with a repetition penalty (whose state the drafted
tokens must enter only once accepted), and many seeded speculative
samples are compared with it by a chi-square goodness-of-fit test. The drafter
mixes prompt lookup (deterministic, q = 1) and the draft model sampling at a
much higher temperature than the target (q far from p), so acceptances,
rejections and residual draws all happen; the test checks that they did.

The bound: the statistic is compared with the chi-square quantile at 1 - 1e-3
for its degrees of freedom, so an exact implementation fails one run in a
thousand. Its power: by Cauchy-Schwarz, chi2 >= 4 N TV^2, where TV is the total
variation distance between the empirical and the exact distribution, so with
N samples any distortion whose empirical TV exceeds sqrt(threshold / 4N)
(about 0.19 here) fails for certain; a rule that accepted every draft would
distort far more than that, since q is much flatter than p.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import pytest

from runtime.llama.sampling import Sampler, SamplingConfig
from runtime.speculative.session import Speculation
from spec_helpers import chat_prompt, load, run

pytestmark = pytest.mark.slow

N_SAMPLES = 300
LENGTH = 3
TARGETS = {
    "top_k": SamplingConfig(temperature=1.0, top_p=1.0, top_k=3),
    "min_p+repeat_penalty": SamplingConfig(temperature=1.0, top_p=1.0, top_k=0, min_p=0.2, repeat_penalty=1.5),
}
DRAFT = SamplingConfig(temperature=3.0, top_p=1.0, top_k=3)
Z_999 = 3.0902  # standard normal quantile at 1 - 1e-3


def chi2_quantile(df: int, z: float = Z_999) -> float:
    """Wilson-Hilferty: within 2% of the true quantile for df >= 5, and above it (so the bound errs towards passing less)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def exact_distribution(model, prompt: list[int], config: SamplingConfig) -> dict[tuple, float]:
    """P(completion) for every continuation of up to LENGTH tokens, by the same path plain decoding takes."""
    # As every sample after the first finds it: the prompt but its last token in the cache, that one evaluated alone.
    model.clear()
    model.decode(prompt[:-1])
    model.decode(prompt[-1:])
    out: dict[tuple, float] = {}

    def walk(prefix: tuple, prob: float) -> None:
        sampler = Sampler(config, model, prompt)  # as a reply's sampler stands after the prefix: penalties see it
        for token in prefix:
            sampler.accept(token)
        ids, probs = sampler.distribution(model.logits(-1))
        for token, p in zip(ids.tolist(), probs.tolist()):
            if model.is_end_of_generation(token):
                out[prefix + ("<eog>",)] = prob * p
            elif len(prefix) + 1 == LENGTH:
                out[prefix + (token,)] = prob * p
            else:
                n = len(model.tokens)
                model.decode((token,))
                walk(prefix + (token,), prob * p)
                model.truncate(n)

    walk((), 1.0)
    return out


class TemperedDraft:
    """The draft model, sampling its drafts at DRAFT's temperature: proposals q very unlike the target's p."""

    def __init__(self, inner):
        self.inner = inner
        self.samplers = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def draft(self, history, k, sampling, sampler):
        self.samplers += 1
        return self.inner.draft(history, k, DRAFT, Sampler(SamplingConfig(DRAFT.temperature, DRAFT.top_p, DRAFT.top_k, seed=sampler.rng.integers(1 << 30))))


@pytest.fixture(scope="module")
def models(starter_model):
    target, draft = load(starter_model, n_ctx=256), load(starter_model, n_ctx=256)
    yield target, draft
    target.close()
    draft.close()


@pytest.mark.parametrize("name", list(TARGETS))
def test_speculative_samples_follow_the_exact_target_distribution(models, name):
    target, draft_model = models
    config = TARGETS[name]
    prompt = chat_prompt(target, "List: red, green, blue, red, green,")
    exact = exact_distribution(target, prompt, config)
    assert sum(exact.values()) == pytest.approx(1.0, abs=1e-6)
    if config.penalized:
        unpenalized = exact_distribution(target, prompt, replace(config, repeat_penalty=1.0))
        distance = 0.5 * sum(abs(exact.get(k, 0.0) - unpenalized.get(k, 0.0)) for k in set(exact) | set(unpenalized))
        assert distance > 0.1, f"the penalty barely changes the distribution (TV {distance:.3f}): the test would not see it ignored"
    target.truncate(len(prompt) - 1)

    speculation = Speculation(target, draft_model, verify_singly=True, fixed_k=2)
    speculation.for_sequence(0).draft = TemperedDraft(speculation.draft)
    counts: Counter = Counter()
    drafted = accepted = 0
    for seed in range(N_SAMPLES):
        sampling = replace(config, seed=seed)
        outcome = run(target, prompt, speculation.steppers_for("both"), max_tokens=LENGTH, sampling=sampling, cold=False)
        key = tuple(outcome.completion) + (("<eog>",) if outcome.finish_reason == "stop" else ())
        counts[key] += 1
        drafted += outcome.stats.draft_tokens
        accepted += outcome.stats.draft_tokens_accepted
    assert 0 < accepted < drafted, "speculation must both accept and reject for this test to mean anything"
    assert set(counts) <= set(exact), f"impossible continuations sampled: {set(counts) - set(exact)}"

    # Cells with an expected count under 5 are pooled, as the chi-square approximation requires.
    big = [key for key, p in exact.items() if p * N_SAMPLES >= 5]
    cells = [(counts[key], exact[key] * N_SAMPLES) for key in big]
    rest_expected = N_SAMPLES - sum(e for _, e in cells)
    if rest_expected > 0:
        cells.append((N_SAMPLES - sum(o for o, _ in cells), rest_expected))
    statistic = sum((o - e) ** 2 / e for o, e in cells)
    df = len(cells) - 1
    assert df >= 3, "the continuation is too predictable to test anything"
    bound = chi2_quantile(df)
    assert statistic < bound, f"chi2 = {statistic:.1f} over {df} degrees of freedom, bound {bound:.1f}"


def test_chi2_quantile_matches_known_values():
    # Tabulated chi-square quantiles at 0.999.
    for df, expected in ((5, 20.515), (10, 29.588), (20, 45.315)):
        assert chi2_quantile(df) == pytest.approx(expected, rel=0.02)
