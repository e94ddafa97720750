"""The speed-up a reply shows is against plain decoding's whole time per token, not its forward pass alone.

A plain token costs its pass and the work around it (sampling, detokenizing, the stop checks, streaming
it). Priced at its pass alone, a reply on the starter model that drafted a little showed 0.8x "the speed
of plain decoding" while it ran as fast as plain decoding does. The real starter model, in-process."""

from __future__ import annotations

import pytest

from runtime.speculative.costs import CostModel
from runtime.speculative.session import Speculation
from spec_helpers import chat_prompt, load, run


def test_a_plain_token_is_its_step_and_the_work_around_it():
    costs = CostModel()
    assert costs.plain_token is None
    costs.observe_pass(1, 0.010)
    assert costs.plain_token == pytest.approx(0.010)  # nothing measured around it yet: the step alone
    for seconds in (0.002, 0.003, 0.050, -0.001):  # the median, so one stalled token does not move it; never below 0
        costs.observe_host(seconds)
    assert costs.plain_token == pytest.approx(0.010 + 0.0025)


def test_a_reply_measures_the_work_around_its_plain_passes_and_prices_its_speed_up_with_it(starter_model):
    target = load(starter_model)
    speculation = Speculation(target)
    try:
        stats = run(target, chat_prompt(target, "Write a short poem about the sea."), speculation.steppers_for("lookup"), max_tokens=48).stats
        costs = speculation.costs
    finally:
        speculation.close()
        target.close()
    assert costs.plain_step is not None and costs.plain_token is not None
    assert costs.plain_token > costs.plain_step, "no pass that drafted nothing was timed to the next"
    assert stats.speedup == pytest.approx(stats.decode_tokens_per_s * costs.plain_token)
