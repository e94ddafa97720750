"""The controller's choices from measured costs and acceptance: draft when it pays, back off and probe when not."""

from __future__ import annotations

import math

import pytest

from runtime.llama.generation import BatchSoFar
from runtime.speculative.adaptive import K_MAX_LOOKUP, LOOKUP_PROBE_AFTER, MIN_GAIN, NEAR_GAIN, PROBE_FIRST, PROBE_MAX, REPLY_PRIOR, Controller, expected_remaining, filler_rows
from runtime.speculative.copy_runs import CopyRuns
from runtime.speculative.costs import CATCH_UP_TOKENS, PRIOR_SLOPES, SETTLED_AFTER, CostModel, band
from runtime.speculative.run_lengths import RunLengths


def costs(t1=0.04, per_token=0.004, draft_step=None, long_per_token=None) -> CostModel:
    """Passes of every size a draft may have measured: each extra token costs `per_token` seconds, or from 16
    tokens on `long_per_token` (matrix kernels: on a CPU long passes cost less per token than short ones)."""
    c = CostModel()
    c.observe_target(1, t1)
    for n in (2, 4, 8, 16, 32, 64):
        c.observe_target(n, t1 + (per_token if n < 16 or long_per_token is None else long_per_token) * (n - 1))
    if draft_step is not None:
        c.observe_draft(draft_step, 1, draft_step)
    return c


def test_run_lengths_learn_where_drafts_break():
    runs = RunLengths(0.5)
    assert runs.survival(3) == pytest.approx([0.5, 0.25, 0.125])  # the prior: the same rate at every position
    for _ in range(30):
        runs.observe(64, 20)  # copies that always break at the 21st token
    s = runs.survival(64)
    assert s[15] > 0.9  # the first 16 are nearly sure
    assert s[40] < 0.05  # past 21 nearly never
    untouched = RunLengths(0.5)
    for _ in range(30):
        untouched.observe(2, 2)
    assert untouched.survival(64)[63] == pytest.approx(RunLengths(0.5).survival(64)[63] / 0.25 * untouched.survival(2)[1], rel=1e-6)  # buckets no draft reached keep the prior


def test_copies_are_learnt_by_how_long_they_have_run_whatever_the_draft_position():
    runs = CopyRuns()
    before = runs.hazard(40)
    runs.observe(32, 64, 5)  # after a 32-token match, the 6th drafted token broke: a copy that had run 37 tokens
    assert runs.hazard(37) > 3 * before
    assert runs.survival(36, 1)[0] < runs.survival(20, 1)[0]  # a draft starting from another match length sees it
    assert runs.hazard(20) < runs.hazard(37)  # runs 32..37 broke once, not runs of 20
    held = CopyRuns()
    for _ in range(10):
        held.observe(64, 5, 5)  # five tokens after a 64-token match, always right
    assert held.survival(64, 5)[4] > 0.99
    assert held.hazard(64) < CopyRuns().hazard(64) / 5


def test_short_drafts_that_always_hold_after_long_matches_lead_to_long_drafts():
    # What stalled module-rename: five-token drafts after 64-token matches, every one accepted, never
    # drafting longer because nothing said positions 6..64 would hold. Now they are runs of 64..69: the same bins.
    c = Controller(costs(t1=0.1, per_token=0.042, long_per_token=0.021))
    for _ in range(6):
        c.observe_lookup(64, 5, 5)
    assert c.plan_lookup(n=64, available=64, room=1000).k >= 32


def test_long_copies_draft_the_longest_draft_at_this_cpus_costs_and_copies_that_break_draft_less():
    # t1 100 ms, each extra verified token 0.42 of a step: this 2-core CPU.
    c = Controller(costs(t1=0.1, per_token=0.042))
    for _ in range(10):
        c.observe_lookup(32, 64, 64)
    assert c.plan_lookup(n=32, available=64, room=1000).k == K_MAX_LOOKUP
    c = Controller(costs(t1=0.1, per_token=0.042))
    for _ in range(10):
        c.observe_lookup(32, 64, 20)
    assert 15 <= c.plan_lookup(n=32, available=64, room=1000).k <= 24  # 15: a 16-token pass (TILE) rather than 17-19


def test_a_draft_that_pays_alone_is_declined_when_other_replies_share_the_pass():
    c = Controller(costs(t1=0.1, per_token=0.042))
    for i in range(30):
        c.observe_lookup(4, 1, int(i % 5 < 3))  # three in five right
    assert c.plan_lookup(n=4, available=16, room=100).k > 0
    # Three other replies decode one token each in the same pass: it already yields three tokens.
    assert c.plan_lookup(n=4, available=16, room=100, batch=BatchSoFar(tokens=3, expected=3.0)).k == 0


def test_nothing_is_drafted_before_a_plain_step_was_measured():
    c = Controller(CostModel())
    assert c.plan_lookup(n=4, available=10, room=100).k == 0
    assert c.plan_draft(room=100).k == 0


def test_long_lookup_matches_with_cheap_verification_draft_many_tokens():
    c = Controller(costs())
    for _ in range(10):
        c.observe_lookup(4, 8, 8)
    plan = c.plan_lookup(n=5, available=16, room=100)
    assert plan.k >= 8 and plan.gain > 2
    assert c.plan_lookup(n=5, available=16, room=3).k == 3  # never past the room left


def test_lookup_that_keeps_failing_is_not_used():
    c = Controller(costs(per_token=0.02))
    for _ in range(20):
        c.observe_lookup(2, 1, 0)
    plan = c.plan_lookup(n=2, available=10, room=100)
    assert plan.k == 0 and plan.gain < MIN_GAIN


def test_a_draft_model_that_could_not_pay_even_if_always_right_is_never_probed():
    # The CPU: a draft step costs 0.6 of a target step; and this 2-core CPU's verification,
    # each extra token about 0.45 of a target step (bench/verify_costs.py).
    c = Controller(costs(t1=0.1, per_token=0.045, draft_step=0.06))
    for _ in range(10):
        c.observe_draft(3, 3)
    assert c.plan_draft(room=100).k == 0
    for _ in range(PROBE_MAX * 2):
        assert not c.plan_draft(room=100).probe
        c.skipped_draft()
    # Nor does it read each prompt at the start of a reply (time to the first token); before its step was
    # measured, it may pay: it does.
    assert not c.draft_could_pay()
    assert Controller(costs(t1=0.1, per_token=0.045)).draft_could_pay()


def test_a_draft_model_that_is_often_wrong_backs_off_and_is_probed_less_and_less_often():
    c = Controller(costs(t1=0.04, per_token=0.004, draft_step=0.006))  # cheap, so it could pay if it were right
    for _ in range(10):
        c.observe_draft(3, 0)
    assert c.plan_draft(room=100).k == 0
    plain_steps = 0
    while not c.plan_draft(room=100).probe:
        c.skipped_draft()
        plain_steps += 1
    assert plain_steps == PROBE_FIRST
    c.observe_draft(2, 0)  # the probe failed
    c.drafted_with_model(probe=True)
    assert c.probe_interval == 2 * PROBE_FIRST
    # No more probes in this reply: each would first catch the draft model up on every token since.
    for _ in range(4 * PROBE_MAX):
        assert not c.plan_draft(room=100).probe
        c.skipped_draft()
    # The next reply may probe again (its plain tokens since the last probe are past the doubled interval).
    c.begin_reply(c.history + [1, 2, 3])
    assert c.plan_draft(room=100).probe


def test_a_draft_model_far_behind_is_not_caught_up_where_even_perfect_drafts_could_not_win_that_back():
    # Borderline here: a draft model that were always right would save a few percent (this CPU, the 0.5B beside
    # the 1.5B). parser-with caught it up on its prompt and reply so far for a 2-token probe mid-reply: 2.5 s of
    # 9 s (about 9 ms a token there: module-logging's 755-token prompt took 6.97 s).
    c = Controller(costs(t1=0.05, per_token=0.025, draft_step=0.015))
    c.costs.observe_catch_up(300, 2.7)
    assert MIN_GAIN < c._optimistic_draft_gain(8, BatchSoFar()) < 1.2
    for _ in range(10):
        c.observe_draft(3, 0)
    while not c.plan_draft(room=100).probe:  # unknown reply length: caught up whatever it costs, as before
        c.skipped_draft()
    assert not c.plan_draft(room=100, behind=lambda: 300, remaining=150).probe
    assert not c.probing, "it only falls further behind: no more probes in this reply"
    assert not c.draft_could_pay(behind=300, remaining=REPLY_PRIOR), "nor is the prompt read into it before the first token"
    # A few tokens behind, or a long reply ahead, it is worth finding out.
    assert c.draft_could_pay(behind=20, remaining=REPLY_PRIOR)
    c.begin_reply(c.history + [1, 2, 3])
    assert c.plan_draft(room=100, behind=lambda: 20, remaining=150).probe
    assert c.draft_could_pay(behind=300, remaining=100_000)
    # A draft model that pays well (a GPU, a larger target) catches up on a long prompt: it wins it back.
    fast = Controller(costs(t1=0.05, per_token=0.0005, draft_step=0.002))
    fast.costs.observe_catch_up(300, 0.06)
    for _ in range(10):
        fast.observe_draft(4, 4)
    assert fast.plan_draft(room=100, behind=lambda: 300, remaining=150).k >= 4
    assert fast.draft_could_pay(behind=300, remaining=REPLY_PRIOR)


def test_a_catch_up_is_priced_from_the_targets_passes_until_one_was_timed():
    c = costs(t1=0.05, per_token=0.005, long_per_token=0.002, draft_step=0.02)
    assert c.catch_up_cost(CATCH_UP_TOKENS, 0.01) == 0.0, "a round's usual sync is in the draft's cost already"
    prior = c.catch_up_cost(1000, 0.01)
    assert 0.02 < prior < 0.02 * 1000 * 0.1, "a draft step spread as the target's long passes spread theirs"
    c.observe_catch_up(CATCH_UP_TOKENS, 5.0)
    assert c.catch_up_cost(1000, 0.01) == prior, "a round's usual sync is not a catch-up"
    c.observe_catch_up(500, 1.0)
    assert c.catch_up_cost(1000 + CATCH_UP_TOKENS, 0.01) == pytest.approx(2.0)


def test_a_reply_is_expected_to_run_as_long_again_as_it_has_within_its_budget():
    assert expected_remaining(0, 10_000) == REPLY_PRIOR
    assert expected_remaining(REPLY_PRIOR // 2, 10_000) == REPLY_PRIOR // 2
    assert expected_remaining(1000, 10_000) == 1000
    assert expected_remaining(1000, 300) == 300
    assert expected_remaining(10, 0) == 0


def test_a_cheap_accurate_draft_model_is_used():
    c = Controller(costs(t1=0.04, per_token=0.004, draft_step=0.004))
    for _ in range(10):
        c.observe_draft(4, 4)
    plan = c.plan_draft(room=100)
    assert plan.k >= 4 and plan.gain > 1.5 and not plan.probe


def test_one_slow_pass_on_a_busy_machine_does_not_decide_for_long():
    c = costs()
    c.observe_target(4, 0.052)
    c.observe_target(4, 0.5)  # one verification that took ten times its usual time
    assert c.target_cost(4) == pytest.approx(0.052)


def test_declined_lookups_that_nearly_pay_are_probed_again():
    c = Controller(costs(per_token=0.04))  # verification looks expensive: a lookup almost pays
    for _ in range(10):
        c.observe_lookup(4, 8, 8)  # yet shadow lookups keep agreeing
    plans = [c.plan_lookup(n=5, available=8, room=100) for _ in range(LOOKUP_PROBE_AFTER)]  # at most 8: the sizes measured
    assert all(p.k == 0 for p in plans[:-1]) and NEAR_GAIN <= plans[0].gain < MIN_GAIN
    assert plans[-1].k > 0 and plans[-1].probe


def test_lookups_far_from_paying_are_not_probed():
    c = Controller(costs(per_token=0.045))
    for _ in range(20):
        c.observe_lookup(1, 1, 0)
    plans = [c.plan_lookup(n=1, available=16, room=100) for _ in range(4 * LOOKUP_PROBE_AFTER)]
    assert not any(p.k or p.probe for p in plans)


def test_long_suffix_matches_are_worth_verifying_before_anything_was_learnt():
    c = Controller(costs(t1=0.1, per_token=0.045))
    # On this CPU's costs, a copied run 32 tokens long is worth verifying; a 1-token coincidence is not.
    assert c.plan_lookup(n=32, available=16, room=100).k > 0
    assert c.plan_lookup(n=1, available=16, room=100).k == 0


def test_pass_costs_are_kept_per_size_band_and_prompt_chunks_price_long_drafts():
    c = CostModel(head_share=0.2)
    c.observe_pass(1, 0.1)
    for _ in range(3):
        c.observe_pass(4, 0.1 * (1 + 0.95 * 3))  # a few tokens: nearly a step each
    # Before anything long was measured, a 64-token pass is priced at what the small band costs per token, at most.
    assert c.target_cost(64) / 0.1 == pytest.approx(1 + 0.95 * 63)
    # A prompt chunk of 64 tokens (logits for its last row only) is a measurement too, the output layer added.
    for _ in range(3):
        c.observe_pass(64, 0.1 * (1 + 0.3 * 63), rows=1)
    long = c.target_cost(64) / 0.1
    assert long == pytest.approx((1 + 0.3 * 63) * (1 + 0.2 * 63 / 64), rel=1e-6)
    assert c.target_cost(4) / 0.1 == pytest.approx(1 + 0.95 * 3)  # the small band keeps its own figure
    assert c.target_cost(16) / 0.1 == pytest.approx(1 + 0.95 * 15)  # in between, nothing measured: the smaller size's cost per token
    for _ in range(3):
        c.observe_pass(16, 0.1 * (1 + 0.5 * 15))
    assert 0.3 < (c.target_cost(24) / 0.1 - 1) / 23 < 0.5  # a measured band: interpolated towards the next measured one


def test_each_pass_is_kept_in_steps_of_its_moment_and_the_prices_match_a_recount_from_scratch():
    # A pass is counted in the plain steps of its moment (the median of the last steps before it), so a plain step that
    # moves the median reprices no band; a pass reprices its own band. The prices must be what counting every band
    # afresh gives, after every pass.
    import random
    import statistics

    rng = random.Random(7)
    c = CostModel()
    seen: list[tuple[int, float, float | None]] = []  # (n, seconds, t1 when it was seen)
    for _ in range(400):
        n = rng.choice([1, 1, 1, 2, 3, 5, 9, 17, 33, 65, 200])
        seconds = 0.1 * (1 + 0.6 * (n - 1)) * rng.uniform(0.8, 1.6)
        singles = [t for m, t, _ in seen if m == 1][-9:]
        seen.append((n, seconds, statistics.median(singles) if singles else None))
        c.observe_pass(n, seconds)
        singles = [t for m, t, _ in seen if m == 1][-9:]
        if not singles:
            assert c.slopes == {}
            continue
        t1 = statistics.median(singles)
        first_t1 = next(t for m, t, _ in seen if m == 1)
        recount = {}
        for b in {band(m) for m, _, _ in seen if m > 1}:
            passes = [(m, t / (then or first_t1)) for m, t, then in seen if m > 1 and band(m) == b][-9:]
            slopes = [(s - 1) / (m - 1) for m, s in passes]
            recount[b] = (statistics.median(m for m, _ in passes), max(0.0, statistics.median(slopes) if len(passes) >= SETTLED_AFTER else min(slopes)))
        assert c.plain_step == t1 and c.slopes.keys() == recount.keys()
        assert all(c.slopes[b] == pytest.approx(recount[b]) for b in recount)
        assert [c.target_cost(k) for k in (2, 7, 24, 64)] == pytest.approx([_recounted_cost(recount, t1, k) for k in (2, 7, 24, 64)])


def test_a_machine_that_slows_down_prices_every_pass_and_the_draft_model_in_the_same_steps():
    # Other work on the machine slows every pass alike. Passes timed before it, set in seconds against the slower
    # steps, would price a 2-token verification at one step and the draft model at half its cost in steps: a draft
    # model that could not pay would look as if it could, and its probe would catch it up on the whole reply.
    c = costs(t1=0.05, per_token=0.045, draft_step=0.0255)
    controller = Controller(c)
    before = {n: c.target_cost(n) / c.plain_step for n in (2, 5, 33)}
    assert not controller.draft_could_pay()
    for _ in range(9):
        c.observe_pass(1, 0.1)  # twice as slow from now on
    assert c.plain_step == 0.1
    assert {n: c.target_cost(n) / c.plain_step for n in (2, 5, 33)} == pytest.approx(before)
    assert c.draft_step == pytest.approx(0.051)
    assert not controller.draft_could_pay()
    # Timed in the slow moment, a draft step is counted in that moment's steps.
    c.observe_draft(None, 1, 0.051)
    assert c.draft_step == pytest.approx(0.051)


def test_draft_model_timings_seen_before_any_plain_step_wait_for_one_to_price_them():
    # A sequence that holds a restored conversation is not calibrated at load: the draft model's first timings (its
    # catch-up on the prompt, a draft) can come before the target's first plain step.
    c = CostModel()
    c.observe_draft(0.03, 2, 0.04)
    c.observe_catch_up(200, 2.0)
    assert c.draft_step is None and c.draft_sync is None and c.draft_catch_up is None  # not yet priced at all
    c.observe_pass(1, 0.08)
    assert c.draft_step == pytest.approx(0.02) and c.draft_sync == pytest.approx(0.03)
    assert c.draft_catch_up == pytest.approx(0.01)
    c.observe_pass(1, 0.16)  # the median of two steps: 0.12; each timing stays in the steps of its moment
    assert c.draft_step == pytest.approx(0.02 / 0.08 * 0.12)


def _recounted_cost(slopes: dict, t1: float, n: int) -> float:
    """CostModel.target_cost's rule, from band prices counted afresh (its docstring's interpolation)."""
    points = sorted(slopes.values())
    below, above = [p for p in points if p[0] <= n], [p for p in points if p[0] > n]
    if not below:
        m, s = points[0]
        slope = s * PRIOR_SLOPES[band(n)] / PRIOR_SLOPES[band(int(m))]
    elif not above or band(n) not in slopes:
        slope = below[-1][1]
    else:
        (m0, s0), (m1, s1) = below[-1], above[0]
        slope = s0 + (math.log(n) - math.log(m0)) / (math.log(m1) - math.log(m0)) * (s1 - s0)
    return t1 * (1 + slope * (n - 1))


def test_a_long_draft_is_priced_from_measured_sizes_not_a_line_between_far_apart_ones():
    # One thread (bench/verify_costs.py --threads 1): 3 tokens cost 2.6 steps, a 200-token prompt chunk about 0.3 of a
    # step per token, and a 32-token verification 24 steps. A line between the first two priced it at 17, and an
    # 8-token match drafted 31 tokens, expecting 16.6 of them to hold: 4 did, and the pass cost 25 steps.
    c = CostModel()
    c.observe_pass(1, 0.1)
    c.observe_pass(3, 0.1 * 2.6)
    c.observe_pass(200, 0.1 * (1 + 0.3 * 199))
    assert c.target_cost(32) / 0.1 == pytest.approx(1 + 0.8 * 31)
    controller = Controller(c)
    assert controller.plan_lookup(n=8, available=31, room=1000).k == 0
    # At that price a long draft never looks better than a short one, even after a copy that keeps holding
    # (module-logging with one thread drafted 2 tokens at a time after 64-token matches). A draft that sure is
    # tried at a size never timed, and its pass measures the band.
    for _ in range(10):
        controller.observe_lookup(64, 31, 31)
    sure = controller.plan_lookup(n=64, available=64, room=1000)
    assert sure.k >= 16 and sure.expected >= 0.85 * (sure.k + 1), sure
    assert not c.measured(sure.k + 1)
    c.observe_pass(sure.k + 1, 0.1 * (1 + 0.9 * sure.k))  # dearer than hoped: now it is known
    assert c.measured(sure.k + 1) and c.target_cost(sure.k + 1) / 0.1 == pytest.approx(1 + 0.9 * sure.k)
    assert controller.plan_lookup(n=64, available=sure.k, room=1000).gain < 0.6 * sure.gain


def test_a_size_timed_twice_is_priced_at_its_cheaper_pass_until_a_third_settles_it():
    # One thread: a 65-token pass cost 0.44 of a step per extra token, the next, in a busy moment, 0.79. Their
    # mean, 0.615, priced the size dearer than 35-token passes (0.52), so no copy drafted it again: module-rename
    # verified in passes of 31-35 tokens for the rest of the run.
    c = CostModel()
    c.observe_pass(1, 0.1)
    for _ in range(SETTLED_AFTER):
        c.observe_pass(35, 0.1 * (1 + 0.52 * 34))
    c.observe_pass(65, 0.1 * (1 + 0.44 * 64))
    c.observe_pass(65, 0.1 * (1 + 0.79 * 64))
    assert c.slope_at(65) == pytest.approx(0.44)
    controller = Controller(c)
    for _ in range(10):
        controller.observe_lookup(64, 63, 63)
    assert controller.plan_lookup(n=64, available=63, room=1000).k == 63  # and its pass times the size a third time
    c.observe_pass(65, 0.1 * (1 + 0.45 * 64))
    assert c.slope_at(65) == pytest.approx(0.45)  # the median of three: the busy moment's pass no longer counts
    assert controller.plan_lookup(n=64, available=63, room=1000).k == 63
    for _ in range(2):
        c.observe_pass(65, 0.1 * (1 + 0.79 * 64))  # dear most of the time: the median says so, and the size is left
    assert c.slope_at(65) == pytest.approx(0.79)
    assert controller.plan_lookup(n=64, available=63, room=1000).k < 40


def test_a_reply_repeating_itself_drafts_less_than_a_copy_of_earlier_text_and_each_is_learnt_apart():
    # Measured (bench/copy_runs.py): after 12 copied tokens a copy of the code given goes on 96 % of the
    # time, a reply repeating its own words 62 %.
    c = Controller(costs(t1=0.1, per_token=0.042, long_per_token=0.021))
    assert c.plan_lookup(n=12, available=64, room=100).k >= 16
    assert c.plan_lookup(n=12, available=64, room=100, of_reply=True).k <= 4
    before = c.copies[False].hazard(12)
    for _ in range(10):
        c.observe_lookup(12, 8, 8, of_reply=True)
    assert c.copies[False].hazard(12) == before
    assert c.plan_lookup(n=12, available=64, room=100, of_reply=True).k >= 8


def test_a_match_continuing_the_reply_is_told_apart_from_one_continuing_the_prompt():
    from runtime.llama.sampling import SamplingConfig
    from runtime.speculative.decoder import Drafting
    from runtime.speculative.lookup import NgramIndex

    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    index = NgramIndex()
    drafting = Drafting(Controller(CostModel()), index, None)  # no step measured yet: lookups are only scored
    drafting.reply_start = len(prompt)
    greedy = SamplingConfig(temperature=0.0, top_p=1.0, top_k=40, seed=0)
    index.reset(prompt + [2, 3])  # the reply copies the prompt
    drafting.propose(prompt + [2, 3], 100, greedy, None, BatchSoFar())
    copy = drafting.shadow
    assert (copy.match, copy.tokens, copy.of_reply) == (2, [4, 5, 6, 7, 8, 2, 3], False)
    index.extend([20, 21, 22, 20, 21])  # now it repeats its own words
    drafting.propose(index.tokens, 100, greedy, None, BatchSoFar())
    copy = drafting.shadow
    assert (copy.match, copy.tokens, copy.of_reply) == (2, [22, 20, 21], True)


def test_acceptance_learnt_in_one_conversation_is_forgotten_in_another_but_kept_across_its_turns():
    # module-logging after module-rename: every copied line had held, so a 6-token match drafted 63 tokens
    # into a function header where the logging line goes, and lost them.
    fresh = Controller(costs(t1=0.1, per_token=0.042)).plan_lookup(n=6, available=64, room=1000)
    c = Controller(costs(t1=0.1, per_token=0.042))
    rename = list(range(100, 400))
    c.begin_reply(rename)
    for _ in range(20):
        c.observe_lookup(6, 64, 64)
    rename.extend(range(1000, 1200))  # the reply, as its stepper appends it
    taught = c.plan_lookup(n=6, available=64, room=1000)
    assert taught.k > fresh.k

    c.begin_reply(rename + list(range(2000, 2020)))  # the next turn of the same conversation
    assert c.plan_lookup(n=6, available=64, room=1000) == taught
    c.begin_reply(rename[:300])  # regenerating the reply: the same conversation
    assert c.plan_lookup(n=6, available=64, room=1000) == taught

    costs_before = c.costs.plain_step
    c.begin_reply(rename[:10] + list(range(5000, 5400)))  # another conversation, the same system prompt
    assert c.plan_lookup(n=6, available=64, room=1000) == fresh
    assert c.costs.plain_step == costs_before


def test_the_longest_draft_and_the_token_it_follows_fill_whole_16_token_tiles_of_the_cpu_kernels():
    # llama.cpp's CPU matrix products take a batch 16 rows at a time (ggml-cpu/repack.cpp, Q4_K on AVX2): a 65-token
    # pass cost 32.7 steps, a 64-token one 29.3 (one thread, the passes of two bench/speculative.py traces). A sure
    # copy's pass is 64 tokens.
    assert (K_MAX_LOOKUP + 1) % 16 == 0
    c = Controller(costs(t1=0.1, per_token=0.042))
    for _ in range(10):
        c.observe_lookup(32, 128, 128)
    assert c.plan_lookup(n=32, available=200, room=1000).k + 1 == 64


@pytest.mark.parametrize("others", [0, 5])
def test_a_draft_that_would_spill_a_few_tokens_past_a_whole_tile_ends_at_the_tile(others):
    # A copy sure to hold for 20 tokens and then break: at these costs the best draft is all 20, a pass of 21 tokens
    # with the token it follows, 5 past the first tile: kept. Sure for 18 (a pass of 19, 3 past it): cut to a pass of 16.
    batch = BatchSoFar(tokens=others, expected=others)
    for sure, k in ((20 - others, 20 - others), (18 - others, 15 - others)):
        c = Controller(costs(t1=0.1, per_token=0.042))
        plan = c.plan_lookup(n=64, available=sure + 8, room=1000, batch=batch, held=(1.0,) * sure + (0.0,) * 8)
        assert plan.k == k
        assert k < plan.expected <= 1 + k  # what the cut draft yields


@pytest.mark.parametrize("others", [0, 5])
def test_a_draft_whose_pass_would_end_a_few_tokens_short_of_a_whole_tile_goes_on_to_it_where_the_copy_may(others):
    # A tile's last rows cost less than nothing: one thread, 12 tokens 9.6 steps, 15 11.1, 16 9.1. A copy sure to hold
    # for 13 tokens, a pass of 14 with the token it follows: drafted on to a pass of 16, the 2 tokens more a free chance.
    # A pass of 11 (5 short) is kept, and so is one whose copy may not go on to the tile's end.
    batch = BatchSoFar(tokens=others, expected=others)
    for sure, available, k in ((13 - others, 40, 15 - others), (10 - others, 40, 10 - others), (13 - others, 14 - others, 13 - others)):
        c = Controller(costs(t1=0.1, per_token=0.042))
        held = ((1.0,) * sure + (0.0,) * 40)[:available]
        plan = c.plan_lookup(n=64, available=available, room=1000, batch=batch, held=held)
        assert plan.k == k
        assert sure < plan.expected <= 1 + sure  # the tokens past the sure ones are not expected to hold


def test_a_pass_a_row_or_two_short_of_a_tile_or_a_few_short_of_64_is_filled_to_it():
    # One thread, in steps (docs/benchmarks/verify_costs_fill_threads_1.json): 13 rows 12.96, 14 13.65, 15 14.35, 16 13.26;
    # 59 44.02, 60 44.45, 63 46.88, 64 36.99.
    assert [filler_rows(n) for n in (1, 2, 12, 13, 14, 15, 16)] == [0, 0, 0, 0, 2, 1, 0]
    assert [filler_rows(n) for n in (29, 30, 31, 45, 46, 47, 48)] == [0, 2, 1, 0, 2, 1, 0]
    assert [filler_rows(n) for n in (59, 60, 61, 62, 63, 64, 76, 78)] == [0, 4, 3, 2, 1, 0, 0, 2]


def test_a_short_match_never_bets_a_long_draft_however_well_copies_held_before():
    # module-logging asked again: after a reply whose copies all held, a 3-token match drafted 63 tokens and kept none.
    c = Controller(costs(t1=0.1, per_token=0.042, long_per_token=0.021))
    for n in (3, 4, 6, 8):
        for _ in range(10):
            c.observe_lookup(n, 64, 64)
    assert c.plan_lookup(n=3, available=64, room=1000).k == 12  # four times the match
    assert c.plan_lookup(n=16, available=64, room=1000).k == K_MAX_LOOKUP


def test_a_continuation_most_other_occurrences_contradict_is_drafted_shorter():
    c = Controller(costs(t1=0.1, per_token=0.042, long_per_token=0.021))
    for _ in range(10):
        c.observe_lookup(8, 32, 32)
    sure = c.plan_lookup(n=8, available=32, room=1000)
    contested = c.plan_lookup(n=8, available=32, room=1000, held=(1.0,) * 4 + (0.25,) * 28)  # 3 of 4 part after 4 tokens
    assert sure.k == 31 and contested.k == 4  # 31: a 32-token pass, two whole TILEs
    assert contested.expected < sure.expected


def test_a_one_token_draft_is_verified_after_a_moderate_match_where_a_2_token_pass_is_cheap():
    # One thread on this CPU: a 2-token pass costs about 1.5 steps, so a one-token draft pays if it holds
    # 60 % of the time; the prior says the first token after a 4-token match holds about 70 %.
    cheap, dear = CostModel(), CostModel()
    for c, two in ((cheap, 1.5), (dear, 1.95)):
        c.observe_target(1, 1.0)
        c.observe_target(2, two)
    assert Controller(cheap).plan_lookup(n=4, available=64, room=1000).k == 1
    assert Controller(dear).plan_lookup(n=4, available=64, room=1000).k == 0


def test_copies_carried_across_a_substitute_learn_how_long_they_run_apart_from_plain_copies():
    c = Controller(costs(t1=0.1, per_token=0.042))
    before = c.plan_lookup(n=24, available=64, room=1000)
    for _ in range(3):
        c.observe_lookup(24, 17, 0, carried=True)  # carried copies that broke at once (a rewrite after the substitute)
    carried = c.plan_lookup(n=24, available=64, room=1000, carried=True)
    plain = c.plan_lookup(n=24, available=64, room=1000)
    assert carried.k < before.k and carried.expected < before.expected
    assert (plain.k, plain.expected) == (before.k, before.expected)
    # A copy of the reply itself is never a carried one.
    assert c.plan_lookup(n=24, available=64, room=1000, of_reply=True, carried=True) == c.plan_lookup(n=24, available=64, room=1000, of_reply=True)
