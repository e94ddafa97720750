"""The controller's choices from measured costs and acceptance: draft when it pays, back off and probe when not."""

from __future__ import annotations

import pytest

from runtime.speculative.adaptive import MIN_GAIN, PROBE_FIRST, Controller, expected_tokens
from runtime.speculative.costs import CostModel


def costs(t1=0.04, per_token=0.004, draft_step=None) -> CostModel:
    c = CostModel()
    c.observe_target(1, t1)
    for n in (2, 4, 8):
        c.observe_target(n, t1 + per_token * (n - 1))
    if draft_step is not None:
        c.observe_draft(draft_step, 1, draft_step)
    return c


def test_expected_tokens_per_pass():
    assert expected_tokens(0.0, 5) == 1.0
    assert expected_tokens(1.0, 5) == 6.0
    assert abs(expected_tokens(0.5, 2) - 1.75) < 1e-12


def test_nothing_is_drafted_before_a_plain_step_was_measured():
    c = Controller(CostModel())
    assert c.plan_lookup(n=4, available=10, room=100).k == 0
    assert c.plan_draft(room=100).k == 0


def test_long_lookup_matches_with_cheap_verification_draft_many_tokens():
    c = Controller(costs())
    for _ in range(10):
        c.observe("lookup4", 8, 8)
    plan = c.plan_lookup(n=5, available=16, room=100)
    assert plan.k >= 8 and plan.gain > 2
    assert c.plan_lookup(n=5, available=16, room=3).k == 3  # never past the room left


def test_lookup_that_keeps_failing_is_not_used():
    c = Controller(costs(per_token=0.02))
    for _ in range(20):
        c.observe("lookup2", 1, 0)
    plan = c.plan_lookup(n=2, available=10, room=100)
    assert plan.k == 0 and plan.gain < MIN_GAIN


def test_an_expensive_draft_model_backs_off_and_is_probed_less_and_less_often():
    # The figures for this CPU: a draft step costs 0.6 of a target step.
    c = Controller(costs(t1=0.03, per_token=0.0105, draft_step=0.018))
    for _ in range(10):
        c.observe("draft", 3, 1)
    assert c.plan_draft(room=100).k == 0
    plain_steps = 0
    while not c.plan_draft(room=100).probe:
        c.skipped_draft()
        plain_steps += 1
    assert plain_steps == PROBE_FIRST
    c.observe("draft", 2, 0)  # the probe failed
    c.drafted_with_model(probe=True)
    assert c.probe_interval == 2 * PROBE_FIRST


def test_a_cheap_accurate_draft_model_is_used():
    c = Controller(costs(t1=0.04, per_token=0.004, draft_step=0.004))
    for _ in range(10):
        c.observe("draft", 4, 4)
    plan = c.plan_draft(room=100)
    assert plan.k >= 4 and plan.gain > 1.5 and not plan.probe


def test_one_slow_pass_on_a_busy_machine_does_not_decide_for_long():
    c = costs()
    c.observe_target(4, 0.052)
    c.observe_target(4, 0.5)  # one verification that took ten times its usual time
    assert c.target_cost(4) == pytest.approx(0.052)


def test_declined_lookups_that_agree_with_the_target_are_probed_again():
    c = Controller(costs(per_token=0.05))  # verification looks far too expensive
    for _ in range(10):
        c.observe("lookup4", 8, 8)  # yet shadow lookups keep agreeing
    plans = [c.plan_lookup(n=5, available=16, room=100) for _ in range(PROBE_FIRST)]
    assert all(p.k == 0 for p in plans[:-1])
    assert plans[-1].k > 0 and plans[-1].probe
