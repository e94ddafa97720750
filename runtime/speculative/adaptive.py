"""How many tokens to draft, from which drafter, or none at all: the choice that maximises expected speed.

A draft of k tokens yields E(k) = 1 + S(1) + ... + S(k) tokens per target pass on
average, S(m) being the chance that its first m tokens are all accepted (the
accepted run plus the target's own next token), at the cost of drafting k tokens
and verifying k + 1. For prompt lookup S comes from how long copies go on
once they have run a while (copy_runs.py): a lookup whose match is long is
usually a copy that goes on for many tokens, which a single per-position rate
cannot express (it would never justify the 48 to 64 tokens such a copy pays
for). For a draft model, whose runs are short, S is learnt per draft position
(run_lengths.py).

The expected speed-up is measured against what the step would give without the
draft: the other replies decoded in the same batch (`BatchSoFar`) share the
pass, so a draft's cost is only the tokens it adds to it. Every cost is measured
on this machine (costs.py). If no k promises at least MIN_GAIN, the step is
plain. A draft model that does not pay is left alone for a while and probed
again later, with the pause doubling while it keeps not paying; prompt lookup
costs nothing to consult, so its acceptance is also measured on plain steps (the
"shadow" draft is compared with what the target produced).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Callable, Sequence

from runtime.llama.generation import BatchSoFar
from runtime.llama.token_alignment import common_prefix
from runtime.speculative.copy_runs import PRIOR_H_EARLIER_TEXT, PRIOR_H_REPLY, CopyRuns
from runtime.speculative.costs import CostModel
from runtime.speculative.replaced import ReplacedTokens
from runtime.speculative.run_lengths import RunLengths

MIN_GAIN = 1.05
# llama.cpp's CPU matrix products take a batch in tiles of TILE rows (ggml-cpu/repack.cpp, Q4_K on AVX2): a pass a few
# tokens past a whole number of tiles costs as much as several more tokens would (one thread, context 1000, in steps:
# 16 tokens 9.1, 17 11.4, 19 12.2; 32 16.7, 33 19.2; 48 24.6, 49 26.7; 64 25.9, 65 30.5; bench/verify_costs.py --sizes).
# A lookup draft that would spill TILE_SPILL tokens or fewer into a new tile ends at the last whole one instead: the
# tokens it gives up could each save at most a step, and the pass is cheaper by more than that. One whose pass would
# end TILE_SHORT tokens or fewer before a whole tile goes on to it where the copy may: a tile's last rows cost less
# than nothing (in steps, one thread: 12 tokens 9.6, 15 11.1, 16 9.1; 28 17.0, 31 19.0, 32 16.7; 44 24.9, 47 26.8,
# 48 24.6; 60 32.4, 63 33.9, 64 25.9; two threads, bench/verify_costs.py --threads 2 --sizes 1-70: 12 10.8, 15 10.7,
# 16 8.1; 28 18.0, 31 20.2, 32 15.4; 45 29.2, 47 29.0, 48 25.7; 60 38.3, 63 38.1, 64 36.5: of the 32 passes 1-4
# tokens short of a tile at the two thread counts, only 44 at two threads, 23.8, cost less than the whole tile). The
# bands of the cost model (costs.py) are too coarse to see this.
TILE = 16
TILE_SPILL = 3
TILE_SHORT = 4
# Where the draft cannot go on to the tile (the copy or the reply's max_tokens ends first), its pass is filled to it with
# rows no one reads (decoder.SpeculativeStepper.plan), if it is FILL_SHORT rows short or fewer, or TILE_SHORT short of
# FILLED_PASS. On the two machines measured, at one and two threads (bench/verify_costs.py --sizes), a pass 1-2 rows
# short of 16, 32 or 48 cost 0.1 to 4.8 steps more than the whole tile, one 3-4 short 2.0 less to 3.5 more, and one of
# 60-63 rows 1.6 to 9.9 more than one of 64 (docs/benchmarks/verify_costs_fill_threads_1.json, one thread: 14 13.65,
# 15 14.35, 16 13.26; 60 44.45, 63 46.88, 64 36.99).
FILL_SHORT = 2
FILLED_PASS = 64
# The longest lookup draft verified in one pass (LOKAL_SPECULATIVE_K_MAX overrides it). With the token it follows,
# a pass of 64, four whole TILEs (one thread, in the runs' traces: 64-token passes cost 29.3 steps, 65-token ones 32.7;
# paired against 64, with module-rename, module-logging and js-fix-empty, `auto` over off 1.064, 0.987 and 1.047).
K_MAX_LOOKUP = 63
# A lookup draft is at most this many times as long as the match it continues (SuffixDecoding's max_spec_factor).
# How long copies go on is learnt from the drafts judged, few of them after short matches, and after a reply
# whose copies held such a count soon says a 3-token match goes on for 30 tokens: module-logging, asked
# again, drafted 63 tokens after 3- and 4-token matches and kept 0 and 2, each a pass of 30 steps' cost.
# Bounded by the match, a copy that has really begun reaches the longest drafts one pass later.
MATCH_FACTOR = 4
K_MAX_DRAFT = 8
PROBE_K = 2
PROBE_FIRST = 16  # plain tokens before the first probe of a draft model that did not pay
PROBE_MAX = 256
LOOKUP_PROBE_AFTER = 64  # declined lookups before verification costs are measured again
NEAR_GAIN = 0.95  # ... if the declined lookups nearly paid
EXPLORE_SURE = 0.85  # a draft of a size never timed is tried if this share of the pass is expected to hold
OPTIMISTIC_RATE = 0.95  # the best per-token acceptance a draft model can be hoped to reach
K_MAX_ENV = "LOKAL_SPECULATIVE_K_MAX"
# A reply is expected to run to this many tokens, or to twice as many as it has run if that is more (one that
# has gone on long tends to go on): what drafting may still save. The app's replies run until the model stops.
REPLY_PRIOR = 256


@dataclass(frozen=True)
class Plan:
    k: int
    gain: float  # expected speed-up over the step without this draft
    probe: bool = False
    expected: float = 1.0  # tokens the step is expected to yield for this reply


DRAFT_PRIOR = 0.6


def k_max_lookup() -> int:
    value = os.environ.get(K_MAX_ENV, "")
    return max(1, int(value)) if value.isdigit() else K_MAX_LOOKUP


class Controller:
    def __init__(self, costs: CostModel, draft_step_prior: float = 0.5, fixed_k: int | None = None):
        self.costs = costs
        self.fixed_k = fixed_k  # tests: always draft this many (no cost model, no back-off)
        self.k_max_lookup = k_max_lookup()
        self.draft_step_prior = draft_step_prior  # a draft step as a fraction of a target step, until measured
        self.history: list[int] = []  # the last reply's history, prompt and reply (its stepper extends the list)
        self._learn_afresh()

    def _learn_afresh(self) -> None:
        # Copies of earlier text (a file given to edit) go on far more often than the reply repeating itself.
        self.copies = {False: CopyRuns(PRIOR_H_EARLIER_TEXT), True: CopyRuns(PRIOR_H_REPLY)}  # keyed by "copies the reply"
        # A copy of earlier text carried across a token the reply substituted (decoder.Drafting._aligned) is learnt
        # apart: a reply that substitutes may be rewriting more than one token (js-modern: after three `var`
        # declarations became `let` and `const`, a 24-token run went on into a `for` loop the reply rewrote).
        self.carried = CopyRuns(PRIOR_H_EARLIER_TEXT)
        self.replaced = ReplacedTokens()  # the tokens of the copied text that this conversation's edits replace
        self.draft_runs = RunLengths(DRAFT_PRIOR)
        self.plain_since_draft = 0
        self.probe_interval = PROBE_FIRST
        # Whether this reply may still probe a draft model that does not pay: a probe first catches the draft
        # model up on every token since it last drafted, so probes at doubling intervals within one reply cost
        # as much as drafting all along (story, one thread: a probe after 136 plain tokens took 29 steps).
        # One that fails ends them until the next reply, which waits twice as long before its own.
        self.probing = True
        self.lookup_declined = 0

    def begin_reply(self, history: list[int], resumed: bool = False) -> None:
        """A reply is about to extend `history` (the list its stepper appends to as it goes); `resumed`:
        the same reply goes on after its context was rebuilt without the oldest turns.

        If it does not go on from the last reply's conversation (less than half of it is shared:
        another conversation on this sequence), acceptance is learnt afresh from the priors. How
        copies held in one conversation says little of another: after a rename, where every copied
        line held, a logging edit that breaks at every function drafted 63 tokens after 6-token
        matches and lost them (bench/speculative.py: module-logging 1.02x after the other prompts,
        1.42x on its own). Measured costs belong to the machine and are kept.
        """
        if not resumed and self.history and common_prefix(self.history, history) * 2 < len(history):
            self._learn_afresh()
        if not resumed:
            self.probing = True
        self.history = history

    def _best(self, survival: list[float], cost, batch: BatchSoFar) -> Plan:
        """The draft length with the highest expected speed-up (which may be below 1: then it does not pay).

        `survival[m - 1]` is the chance that a draft's first m tokens are accepted; `cost(k)` the
        seconds of this step with k drafted tokens (the batch's other tokens included).
        """
        yields, gain = _yields(survival), _gain(cost, batch)
        best = Plan(0, 0.0)
        for k in range(1, len(survival) + 1):
            g = gain(k, yields[k])
            if g > best.gain:
                best = Plan(k, g, expected=yields[k])
        return best

    def _target(self, batch: BatchSoFar, optimistic: bool = False):
        return lambda k: self.costs.target_cost(batch.tokens + 1 + k, optimistic)

    def plan_lookup(
        self, n: int, available: int, room: int, batch: BatchSoFar | None = None, of_reply: bool = False, held: Sequence[float] = (),
        carried: bool = False,
    ) -> Plan:
        """A lookup draft after a suffix match of n tokens, continuing earlier text or (of_reply) the reply itself;
        `carried`: a copy of earlier text whose run of n goes on across a token the reply substituted.

        `held[m - 1]`: the chance, apart from how long copies run, that the draft's first m tokens hold: the share of
        the suffix's occurrences that agree with them (lookup.py), times the chance that the reply copies rather than
        replaces them (replaced.py). A copy goes on only as far as the run-length hazard and that chance both allow.
        """
        batch = batch or BatchSoFar()
        k_max = min(available, room, self.k_max_lookup)
        if k_max <= 0:
            return Plan(0, 1.0)
        if self.fixed_k is not None:
            return Plan(min(self.fixed_k, k_max), 1.0)
        if self.costs.plain_step is None:
            return Plan(0, 1.0)  # first measure what a plain step costs here
        k_max = min(k_max, MATCH_FACTOR * n)
        survival = self._copies(of_reply, carried).survival(n, k_max)
        if held:
            survival = [s * h for s, h in zip(survival, held)]
        plan = self._best(survival, self._target(batch), batch)
        bold = self._explore(survival, batch, plan.k)
        if bold is not None:
            self.lookup_declined = 0
            return _on_tile(bold, survival, batch)
        if plan.gain >= MIN_GAIN:
            self.lookup_declined = 0
            return _on_tile(plan, survival, batch)
        self.lookup_declined += 1
        if self.lookup_declined >= LOOKUP_PROBE_AFTER and plan.gain >= NEAR_GAIN:
            # Lookups that nearly pay keep being declined: verification may have been measured on a
            # busy moment, so measure it again now.
            self.lookup_declined = 0
            return Plan(min(PROBE_K, k_max), plan.gain, probe=True)
        return Plan(0, plan.gain)

    def _explore(self, survival: list[float], batch: BatchSoFar, planned: int) -> Plan | None:
        """The longest draft, past `planned`, of a size whose pass was never timed, that is sure enough to hold
        (EXPLORE_SURE of it expected) and would pay at the cost hoped for; None if there is none.

        An untimed size is priced at the smaller sizes' cost per token, so a long draft never looks better
        than a short one: module-logging with one thread drafted 2 tokens at a time after 64-token matches,
        each held. A copy this sure loses little if the pass is dearer than hoped, and the pass times the size.
        """
        yields, gain = _yields(survival), _gain(self._target(batch, optimistic=True), batch)
        for k in range(len(survival), planned, -1):
            if yields[k] < EXPLORE_SURE * (k + 1) or self.costs.measured(batch.tokens + 1 + k):
                continue
            g = gain(k, yields[k])
            if g >= MIN_GAIN:
                return Plan(k, g, expected=yields[k])
        return None

    def _draft_cost(self, batch: BatchSoFar):
        prior_step = self.draft_step_prior * (self.costs.plain_step or 0.0)
        target = self._target(batch)
        return lambda k: (self.costs.draft_cost(k, prior_step) if k else 0.0) + target(k)

    def plan_draft(self, room: int, batch: BatchSoFar | None = None, behind: Callable[[], int] = lambda: 0, remaining: int | None = None) -> Plan:
        """A draft model's draft, with its cache `behind()` tokens behind (asked only when it would draft) and about
        `remaining` tokens left in the reply (None: unknown, as if catching up were free)."""
        batch = batch or BatchSoFar()
        k_max = min(room, K_MAX_DRAFT)
        if k_max <= 0:
            return Plan(0, 1.0)
        if self.fixed_k is not None:
            return Plan(min(self.fixed_k, k_max), 1.0)
        if self.costs.plain_step is None:
            return Plan(0, 1.0)
        plan = self._best(self.draft_runs.survival(k_max), self._draft_cost(batch), batch)
        if plan.gain >= MIN_GAIN:
            return plan if self._catch_up_pays(behind, remaining, plan.gain) else Plan(0, plan.gain)
        if self.probing and self.plain_since_draft >= self.probe_interval and self._draft_could_pay(k_max, batch):
            if self._catch_up_pays(behind, remaining, self._optimistic_draft_gain(k_max, batch)):
                return Plan(min(PROBE_K, k_max), plan.gain, probe=True)
            # Behind by more than even a draft model that is always right could win back in this reply (it
            # only falls further behind): parser-with, asked again, caught the draft model up on its prompt and the
            # reply so far for a 2-token probe mid-reply, 2.5 s of a 9 s reply (bench/speculative.py --trace).
            self.probing = False
        return Plan(0, plan.gain)

    def draft_could_pay(self, behind: int = 0, remaining: int | None = None) -> bool:
        """Whether the draft model could pay at all here, for a reply decoded alone (see _draft_could_pay), once
        caught up on the `behind` tokens it has not read, in the `remaining` tokens the reply is expected to run."""
        if self.fixed_k is not None:
            return True
        if not self._draft_could_pay(K_MAX_DRAFT, BatchSoFar()):
            return False
        return self.costs.draft_step is None or self._catch_up_pays(behind, remaining, self._optimistic_draft_gain(K_MAX_DRAFT, BatchSoFar()))

    def _draft_could_pay(self, k_max: int, batch: BatchSoFar) -> bool:
        """Whether a draft model that were almost always right would pay at the costs measured here.

        If not (on a 2-core CPU a 0.5B draft step costs about a third of a 1.5B target step, and
        verifying each extra token about 0.45 of one), probing it again only ever loses time.
        """
        if self.costs.draft_step is None:
            return True  # not measured yet: the probe measures it
        return self._optimistic_draft_gain(k_max, batch) >= MIN_GAIN

    def _optimistic_draft_gain(self, k_max: int, batch: BatchSoFar) -> float:
        """The speed-up of a draft model whose tokens were each accepted OPTIMISTIC_RATE of the time."""
        optimistic = [OPTIMISTIC_RATE**m for m in range(1, k_max + 1)]
        return self._best(optimistic, self._draft_cost(batch), batch).gain

    def _catch_up_pays(self, behind: Callable[[], int] | int, remaining: int | None, gain: float) -> bool:
        """Whether drafting at `gain` over the `remaining` tokens saves more than catching up on `behind` costs.

        A step that drafts at gain g takes 1/g of a plain one: the most the rest of the reply can save is
        remaining * t1 * (1 - 1/g), and the catch-up is spent first, whether the drafts then hold or not.
        """
        if remaining is None or self.costs.plain_step is None:
            return True
        behind = behind() if callable(behind) else behind
        saved = remaining * self.costs.plain_step * max(0.0, 1.0 - 1.0 / gain) if gain > 0 else 0.0
        return self.costs.catch_up_cost(behind, self.draft_step_prior * self.costs.plain_step) <= saved

    def observe_lookup(self, match: int, drafted: int, accepted: int, of_reply: bool = False, carried: bool = False) -> None:
        self._copies(of_reply, carried).observe(match, drafted, accepted)

    def _copies(self, of_reply: bool, carried: bool) -> CopyRuns:
        return self.carried if carried and not of_reply else self.copies[of_reply]

    def observe_draft(self, drafted: int, accepted: int) -> None:
        self.draft_runs.observe(drafted, accepted)

    def drafted_with_model(self, probe: bool) -> None:
        self.plain_since_draft = 0
        if probe:
            # Did the probe bring the estimate back above the bar? If not, wait twice as long next time.
            paid = self.plan_draft_gain() >= MIN_GAIN
            self.probe_interval = PROBE_FIRST if paid else min(self.probe_interval * 2, PROBE_MAX)
            self.probing = paid

    def plan_draft_gain(self) -> float:
        saved, self.plain_since_draft = self.plain_since_draft, 0
        try:
            return self.plan_draft(K_MAX_DRAFT).gain
        finally:
            self.plain_since_draft = saved

    def skipped_draft(self) -> None:
        self.plain_since_draft += 1


def expected_remaining(so_far: int, budget: int) -> int:
    """The tokens a reply that has produced `so_far` is expected still to produce, within `budget` (max_tokens, the context)."""
    return max(0, min(budget, max(REPLY_PRIOR, 2 * so_far) - so_far))


def _on_tile(plan: Plan, survival: list[float], batch: BatchSoFar) -> Plan:
    """`plan`, its pass ended at a whole TILE where one is near: cut back to it if the pass would spill TILE_SPILL tokens
    or fewer past it; drafted on to it if the pass would end TILE_SHORT tokens or fewer before it and the copy may go on
    that far (`survival` is as long as the draft may be)."""
    n = batch.tokens + 1 + plan.k
    spill, short = n % TILE, short_of_tile(n)
    if 0 < spill <= TILE_SPILL and plan.k > spill:
        k = plan.k - spill
    elif short and plan.k + short <= len(survival):
        k = plan.k + short
    else:
        return plan
    return Plan(k, plan.gain, plan.probe, expected=_yields(survival[:k])[k])


def short_of_tile(n: int) -> int:
    """How many rows a pass of n tokens is short of a whole TILE, where that is TILE_SHORT or fewer (else 0)."""
    short = -n % TILE
    return short if short <= TILE_SHORT else 0


def filler_rows(n: int) -> int:
    """The rows no one reads that fill a verification pass of n tokens to a whole tile (FILL_SHORT, FILLED_PASS), else 0."""
    short = short_of_tile(n)
    return short if short <= FILL_SHORT or n + short == FILLED_PASS else 0


def _yields(survival: list[float]) -> list[float]:
    """E(k) for k = 0 .. len(survival): the tokens a step with a k-token draft is expected to yield, 1 + S(1) + ... + S(k)."""
    return list(itertools.accumulate(survival, initial=1.0))


def _gain(cost, batch: BatchSoFar):
    """gain(k, expected): the speed-up of a step with k drafted tokens expected to yield `expected`, over the step without."""
    without = (batch.expected + 1.0) / cost(0)
    return lambda k, expected: (batch.expected + expected) / cost(k) / without
