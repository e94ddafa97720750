"""How many tokens to draft, from which drafter, or none at all: the choice that maximises expected speed.

With a per-position acceptance rate a, a draft of k tokens yields on average
E(k) = (1 - a^(k+1)) / (1 - a) tokens per target pass (the accepted run plus the
target's own next token), at the cost of drafting k tokens and verifying k + 1.
The expected speed-up over plain decoding is E(k) * t(1) / cost(k), with every
cost measured on this machine (costs.py). If no k promises at least MIN_GAIN,
the step is plain. A draft model that does not pay is then left alone for a
while and probed again later, with the pause doubling while it keeps not paying;
prompt lookup costs nothing to consult, so its acceptance is also measured on
plain steps (the "shadow" draft is compared with what the target produced).
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.speculative.costs import CostModel

MIN_GAIN = 1.05
K_MAX_LOOKUP = 16
K_MAX_DRAFT = 8
PROBE_K = 2
PROBE_FIRST = 16  # plain tokens before the first probe of a draft model that did not pay
PROBE_MAX = 256
LOOKUP_PROBE_AFTER = 64  # declined lookups before verification costs are measured again
NEAR_GAIN = 0.95  # ... if the declined lookups nearly paid
OPTIMISTIC_RATE = 0.95  # the best acceptance a draft model can be hoped to reach
DECAY = 0.9  # per observation: the estimate follows the last ten or so drafts


class Acceptance:
    """Per-position acceptance rate of one kind of draft: accepted / (accepted + rejections), decayed."""

    def __init__(self, prior: float):
        self.accepted = 2.0 * prior
        self.rejected = 2.0 * (1.0 - prior)

    @property
    def rate(self) -> float:
        return self.accepted / (self.accepted + self.rejected)

    def observe(self, drafted: int, accepted: int) -> None:
        self.accepted = self.accepted * DECAY + accepted
        self.rejected = self.rejected * DECAY + (1.0 if accepted < drafted else 0.0)


@dataclass(frozen=True)
class Plan:
    k: int
    gain: float  # expected speed-up over plain decoding
    probe: bool = False


def expected_tokens(rate: float, k: int) -> float:
    if rate >= 1.0:
        return k + 1.0
    return (1.0 - rate ** (k + 1)) / (1.0 - rate)


LOOKUP_BINS = (32, 16, 8, 4, 3, 2, 1)  # suffix match lengths that share an acceptance estimate


def lookup_key(n: int) -> str:
    return f"lookup{next(b for b in LOOKUP_BINS if n >= b)}"


# Suffix matches of one or two tokens are often coincidences; long ones mean the reply is copying a run.
# Priors: how often the first drafted token was accepted, measured on code edits (lookup.py).
LOOKUP_PRIORS = {"lookup1": 0.2, "lookup2": 0.4, "lookup3": 0.6, "lookup4": 0.65, "lookup8": 0.75, "lookup16": 0.85, "lookup32": 0.95}
DRAFT_PRIOR = 0.6


class Controller:
    def __init__(self, costs: CostModel, draft_step_prior: float = 0.5, fixed_k: int | None = None):
        self.costs = costs
        self.fixed_k = fixed_k  # tests: always draft this many (no cost model, no back-off)
        self.draft_step_prior = draft_step_prior  # a draft step as a fraction of a target step, until measured
        self.acceptance: dict[str, Acceptance] = {key: Acceptance(p) for key, p in LOOKUP_PRIORS.items()}
        self.acceptance["draft"] = Acceptance(DRAFT_PRIOR)
        self.plain_since_draft = 0
        self.probe_interval = PROBE_FIRST
        self.lookup_declined = 0

    def rate(self, key: str) -> float:
        return self.acceptance[key].rate

    def _best(self, rate: float, k_max: int, cost) -> Plan:
        """The draft length with the highest expected speed-up (which may be below 1: then it does not pay)."""
        t1 = self.costs.plain_step
        best = Plan(0, 0.0)
        for k in range(1, k_max + 1):
            gain = expected_tokens(rate, k) * t1 / cost(k)
            if gain > best.gain:
                best = Plan(k, gain)
        return best

    def plan_lookup(self, n: int, available: int, room: int) -> Plan:
        k_max = min(available, room, K_MAX_LOOKUP)
        if k_max <= 0:
            return Plan(0, 1.0)
        if self.fixed_k is not None:
            return Plan(min(self.fixed_k, k_max), 1.0)
        if self.costs.plain_step is None:
            return Plan(0, 1.0)  # first measure what a plain step costs here
        plan = self._best(self.rate(lookup_key(n)), k_max, lambda k: self.costs.target_cost(k + 1))
        if plan.gain >= MIN_GAIN:
            self.lookup_declined = 0
            return plan
        self.lookup_declined += 1
        if self.lookup_declined >= LOOKUP_PROBE_AFTER and plan.gain >= NEAR_GAIN:
            # Lookups that nearly pay keep being declined: verification may have been measured on a
            # busy moment, so measure it again now.
            self.lookup_declined = 0
            return Plan(min(PROBE_K, k_max), plan.gain, probe=True)
        return Plan(0, plan.gain)

    def plan_draft(self, room: int) -> Plan:
        k_max = min(room, K_MAX_DRAFT)
        if k_max <= 0:
            return Plan(0, 1.0)
        if self.fixed_k is not None:
            return Plan(min(self.fixed_k, k_max), 1.0)
        t1 = self.costs.plain_step
        if t1 is None:
            return Plan(0, 1.0)
        prior_step = self.draft_step_prior * t1
        plan = self._best(self.rate("draft"), k_max, lambda k: self.costs.draft_cost(k, prior_step) + self.costs.target_cost(k + 1))
        if plan.gain >= MIN_GAIN:
            return plan
        if self.plain_since_draft >= self.probe_interval and self._draft_could_pay(k_max, prior_step):
            return Plan(min(PROBE_K, k_max), plan.gain, probe=True)
        return Plan(0, plan.gain)

    def _draft_could_pay(self, k_max: int, prior_step: float) -> bool:
        """Whether a draft model that were almost always right would pay at the costs measured here.

        If not (on a 2-core CPU a 0.5B draft step costs about a third of a 1.5B target step, and
        verifying each extra token about 0.45 of one), probing it again only ever loses time.
        """
        if self.costs.draft_step is None:
            return True  # not measured yet: the probe measures it
        cost = lambda k: self.costs.draft_cost(k, prior_step) + self.costs.target_cost(k + 1)
        return self._best(OPTIMISTIC_RATE, k_max, cost).gain >= MIN_GAIN

    def observe(self, key: str, drafted: int, accepted: int) -> None:
        self.acceptance[key].observe(drafted, accepted)

    def drafted_with_model(self, probe: bool) -> None:
        self.plain_since_draft = 0
        if probe:
            # Did the probe bring the estimate back above the bar? If not, wait twice as long next time.
            paid = self.plan_draft_gain() >= MIN_GAIN
            self.probe_interval = PROBE_FIRST if paid else min(self.probe_interval * 2, PROBE_MAX)

    def plan_draft_gain(self) -> float:
        saved, self.plain_since_draft = self.plain_since_draft, 0
        try:
            return self.plan_draft(K_MAX_DRAFT).gain
        finally:
            self.plain_since_draft = saved

    def skipped_draft(self) -> None:
        self.plain_since_draft += 1
