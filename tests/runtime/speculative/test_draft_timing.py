"""What a draft model's draft cost, as the controller is told it: the steps it took, also when it stopped early.

Drafting stops at a token the draft model is unsure of; counted by tokens kept, a
probe of 2 that kept 1 measured no step, and a draft model that could never pay
was probed again and again, each time catching up on every token since (story,
one thread: 0.80 of plain decoding). The real starter model, in-process.
"""

from __future__ import annotations

import random

import pytest

from runtime.gguf.reader import read_file_header
from runtime.llama.llama_model import LlamaModel, LoadSettings
from runtime.llama.sampling import SamplingConfig
from runtime.speculative.draft_model import DraftModel


@pytest.fixture(scope="module")
def draft(starter_model):
    settings = LoadSettings(path=str(starter_model), n_ctx=512, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=1)
    model = LlamaModel(settings, read_file_header(str(starter_model)))
    yield DraftModel(model.sequences[0])
    model.close()


def test_a_draft_cut_short_still_reports_the_step_it_took(draft):
    greedy = SamplingConfig(temperature=0.0)
    rng = random.Random(7)
    cut_short = 0
    for _ in range(8):
        history = [rng.randrange(1000, 40000) for _ in range(24)]  # noise: the draft model is rarely sure of it
        tokens, _ = draft.draft(history, 2, greedy, None)
        sync_seconds, steps, seconds = draft.last_timing
        cut_short += len(tokens) < 2
        assert steps == 1 and seconds > 0, f"a 2-token draft decodes its first token once, kept {len(tokens)}: {draft.last_timing}"
    assert cut_short, "no draft was cut short: the case this test is about did not happen (pick other histories)"


def test_a_draft_model_is_timed_at_load_so_the_first_reply_never_feeds_one_that_cannot_pay(starter_model):
    # The starter model drafting for itself: a draft step costs a whole target step, which can never pay.
    # Unmeasured, the first reply read its prompt into the draft model before the first token (5.7 s with
    # the 0.5B beside the 1.5B: bench/draft_first_reply.py) and then probed it, catching it up on every token since.
    from runtime.speculative.session import Speculation
    from spec_helpers import chat_prompt, load, run

    target, draft_llama = load(starter_model), load(starter_model)
    speculation = Speculation(target, draft_llama)
    try:
        assert speculation.costs.draft_step is not None and speculation.costs.draft_step > 0
        assert not draft_llama.sequences[-1].tokens, "the calibration leaves the draft's cache empty"
        controller = speculation.for_sequence(0).controller
        assert not controller.draft_could_pay(), f"a draft step of {speculation.costs.draft_step:.4f} s against a target step of {speculation.costs.plain_step:.4f} s"
        outcome = run(target, chat_prompt(target, "Count from one to twenty in words."), speculation.steppers_for("auto"), max_tokens=48)
        assert outcome.stats.model_draft_tokens == 0
        assert not speculation.for_sequence(0).draft.model.tokens, "the draft model read the prompt of a reply it could not speed up"
    finally:
        speculation.close()
        target.close()


def test_the_smallest_verification_is_timed_at_load_even_where_the_budget_holds_no_more(starter_model):
    # With one thread the calibration budget held two single steps and nothing else: a 2-token pass stayed
    # priced by the prior, 1.95 steps, at which no one-token draft can pay; none was ever verified, so the
    # band was never measured, though such a pass costs 1.5 steps there (bench/verify_costs.py --threads 1).
    from runtime.speculative.costs import CostModel, calibrate
    from spec_helpers import load

    target = load(starter_model)
    try:
        costs = CostModel()
        calibrate(target.sequences[-1], costs, budget_s=0.0)
        assert costs.plain_step is not None and costs.measured(2), f"measured bands: {sorted(costs.slopes)}"
        assert not costs.measured(4), "a budget of nothing has no room for the larger pass"
        assert not target.sequences[-1].tokens, "the calibration leaves the cache empty"
    finally:
        target.close()


def test_a_catch_up_is_timed_for_the_cost_model_and_a_rounds_usual_sync_is_not(draft):
    from runtime.speculative.costs import CATCH_UP_TOKENS

    greedy = SamplingConfig(temperature=0.0)
    history = list(range(1000, 1100))
    draft.model.clear()
    draft.last_catch_up = None
    assert draft.behind(history) == len(history)
    draft.draft(history, 2, greedy, None)
    assert draft.last_catch_up is not None and draft.last_catch_up[0] == len(history) and draft.last_catch_up[1] > 0
    draft.last_catch_up = None
    history += [1200, 1201]  # a round's accepted tokens: the drafted one is evaluated again with them
    assert 0 < draft.behind(history) <= CATCH_UP_TOKENS
    draft.draft(history, 2, greedy, None)
    assert draft.last_catch_up is None, "a round's usual sync is a draft's cost (draft_sync), not a catch-up"
    draft.sync(history)
    assert draft.behind(history) == 0 and draft.synced(history)


def test_one_busy_moment_at_load_does_not_price_the_smallest_verification_for_the_session(starter_model, monkeypatch):
    # Nothing but a verification re-measures the 2-token band: priced by one slow pass, no short draft pays and none
    # is verified. A benchmark whose load overlapped other work (an archive being unpacked) drafted nothing in 9
    # replies, where the runs before and after drafted in every one; this is the way that can happen.
    from runtime.speculative import costs as costs_module
    from spec_helpers import load

    real = costs_module._timed_pass
    slowed = []

    def first_verification_busy(seq, tokens):
        seconds = real(seq, tokens)
        if len(tokens) == costs_module.SMALLEST_VERIFICATION and not slowed:
            slowed.append(seconds)
            return seconds * 10  # another process had the cores for that one pass
        return seconds

    monkeypatch.setattr(costs_module, "_timed_pass", first_verification_busy)
    target = load(starter_model)
    try:
        costs = costs_module.CostModel()
        costs_module.calibrate(target.sequences[-1], costs)
    finally:
        target.close()
    assert slowed and costs.slopes[2][1] < 3.0, f"the 2-token band priced at {costs.slopes[2][1]:.2f} steps per extra token"
