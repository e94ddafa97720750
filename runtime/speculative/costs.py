"""What a forward pass costs on this machine: measured at load, then refreshed from every pass as decoding goes.

The controller needs what a target pass over n tokens costs (one plain step is
n = 1; a step of several replies, or a verification, carries more) and what one
draft-model step costs. The cost of a pass is not a line in n: on a CPU a pass of
a few tokens costs nearly a full step per token (the weights are read per token
by the same matrix-vector kernels), while a pass of tens of tokens runs matrix
kernels that cost far less per token (measured here with Qwen2.5-Coder-1.5B: 4
tokens ~0.95 of a step each, 33 ~0.46, 65 ~0.45). That is why long drafts pay
where short ones barely do. So passes are kept per size band (2-3, 4-7, ...,
64-127, 128+ tokens), each band summarised by the median of its recent passes'
cost per extra token (a "slope", in plain steps of the moment each pass ran; the cheapest
until it has three, SETTLED_AFTER), and t(n) = t1 * (1 + slope(n) * (n - 1)) with
slope(n) interpolated between the bands measured (in log n) within a measured
band, and no lower than the nearest smaller measured band's in one that was not
(the prior curve stands in before anything was measured).

Every pass is an observation: speculative verifications, batches of several
replies, and prompt chunks too, so the first prompt of a conversation already
prices long drafts (a prompt chunk computes logits for its last token only; the
output layer for every other row is added from the model's shape). At load a
short calibration (`calibrate`, a fraction of a second) gives a first t1 and a
small-band point. Medians, because on a machine shared with other work a single
pass can take many times its usual time, and one such outlier must not decide
for long.
"""

from __future__ import annotations

import bisect
import collections
import functools
import math
import statistics
import time
from typing import Callable

SMOOTHING = 0.25  # weight of the newest draft-model measurement
WINDOW = 9  # passes kept per band (and single-token passes for t1)
BAND_STARTS = (2, 4, 8, 16, 32, 64, 128)
# Before a band was measured: the cost of each extra token, as a share of a single-token step (this 2-core CPU).
PRIOR_SLOPES = {2: 0.95, 4: 0.95, 8: 0.9, 16: 0.7, 32: 0.5, 64: 0.45, 128: 0.45}
# Until a band has this many passes it is priced at its cheapest, not their median: the median of two is their
# mean, and a size priced dear is not drafted, so not timed again. With one thread a 65-token pass cost 0.44 of a
# step per extra token (lru-add-len), the next 0.79 (js-fix-empty, a busy moment); their mean, 0.615, stood for the
# rest of the run, and module-rename verified its copies 31-35 tokens at a time, 1.64x of plain, where four rounds
# in a runtime of its own drafted 35 a pass on average and reached 1.97x. (Trying such a size again by
# exploration instead, Controller._explore, cost more than it won: a draft sure enough to explore with still
# breaks, and a first reply has many sizes timed once or twice; bench/lookup_replay.py.)
SETTLED_AFTER = 3
CALIBRATION_BUDGET_S = 0.4  # at most this long, at load
CALIBRATION_MAX_TOKENS = 32
SMALLEST_VERIFICATION = 2  # tokens in the pass that verifies a one-token draft
# A round normally leaves the draft model one or two tokens behind the target: that sync is part of a draft's
# cost (draft_sync). Further behind (it sat out plain steps, lookup copies, a new prompt), catching up is a
# one-off, priced per token (draft_catch_up) against what drafting can still save in the reply.
CATCH_UP_TOKENS = 3


def band(n: int) -> int:
    return BAND_STARTS[max(0, bisect.bisect_right(BAND_STARTS, n) - 1)]


def _mix(old: float | None, new: float) -> float:
    return new if old is None else old + SMOOTHING * (new - old)


class CostModel:
    def __init__(self, head_share: float = 0.0) -> None:
        """`head_share`: the output layer's share of a token's compute (for passes that skip it on most rows)."""
        self.head_share = head_share
        self._single: collections.deque[float] = collections.deque(maxlen=WINDOW)
        # Each pass as (n, its cost in plain steps of its moment); passes timed before any plain step wait in _unpriced.
        self._bands: dict[int, collections.deque[tuple[int, float]]] = {b: collections.deque(maxlen=WINDOW) for b in BAND_STARTS}
        self._unpriced: list[tuple[int, float]] = []
        self.plain_step: float | None = None  # t1, seconds
        # A plain token's work besides its pass (sampling it, detokenizing, the stop checks, streaming it, the
        # scheduler): measured on passes that drafted nothing, less drafting's own work. Plain decoding pays it
        # too, so the speed-up a reply shows is against a plain token's whole time, not its pass alone.
        self._host: collections.deque[float] = collections.deque(maxlen=WINDOW)
        self.slopes: dict[int, tuple[float, float]] = {}  # band -> (median n, median slope), measured
        self._points: list[tuple[float, float]] = []  # the slopes' values by size: what every price reads
        self._sizes: list[float] = []
        # The draft model's costs, in plain steps of the moment each was timed (see draft_step).
        self._draft_step: float | None = None  # per drafted token
        self._draft_sync: float | None = None  # to catch the draft's cache up before drafting
        self._draft_catch_up: float | None = None  # per token of a catch-up over more than CATCH_UP_TOKENS
        # Draft-model timings seen before any plain step, kept until one prices them (as passes wait in _unpriced).
        self._unpriced_draft: list[Callable[[], None]] = []

    @property
    def slope(self) -> float:
        """The cost of an extra token in a pass of 64 (what a long draft pays), as a share of a step."""
        return self.slope_at(64)

    def observe_pass(self, n: int, seconds: float, rows: int | None = None) -> None:
        """A target pass over n tokens that computed `rows` logits rows (None: all of them).

        A pass is kept as its cost in plain steps of its moment (t1 then, the median of the steps just before it),
        never in seconds: on a machine whose other work comes and goes, every pass slows alike, and a pass timed
        in a busy minute, set against a step timed in a quiet one, misprices every draft. Between two replies of
        one prompt t1 went from 0.073 to 0.122 s, and the same passes of 128 tokens and more then read 0.41 and
        0.24 steps per extra token, the same 2-token passes 1.16 and 0.29 (bench/speculative.py --trace;
        bench/price_errors.py measures how each rule would have priced a trace's passes).
        """
        if n <= 1:
            self._single.append(seconds)
            first = self.plain_step is None
            self.plain_step = statistics.median(self._single)
            if first:
                for m, s in self._unpriced:
                    self._keep(m, s / self.plain_step)
                self._unpriced.clear()
                for observe in self._unpriced_draft:
                    observe()
                self._unpriced_draft.clear()
            return
        if rows is not None and rows < n:
            seconds *= 1.0 + self.head_share * (n - rows) / n  # as if it had computed every row
        if self.plain_step is None:
            self._unpriced.append((n, seconds))
        else:
            self._keep(n, seconds / self.plain_step)

    def _keep(self, n: int, steps: float) -> None:
        passes = self._bands[band(n)]
        passes.append((n, steps))
        slopes = [(s - 1.0) / (m - 1) for m, s in passes]
        price = statistics.median(slopes) if len(passes) >= SETTLED_AFTER else min(slopes)
        self.slopes[band(n)] = (statistics.median(m for m, _ in passes), max(0.0, price))
        self._points = sorted(self.slopes.values())
        self._sizes = [m for m, _ in self._points]

    observe_target = observe_pass

    def observe_host(self, seconds: float) -> None:
        """A plain token's time outside its pass, besides drafting's: what plain decoding spends on it too."""
        self._host.append(max(0.0, seconds))

    @property
    def plain_token(self) -> float | None:
        """Seconds per token of plain decoding here: a plain step, and the work around it where that was measured."""
        if self.plain_step is None:
            return None
        return self.plain_step + (statistics.median(self._host) if self._host else 0.0)

    def slope_at(self, n: int, optimistic: bool = False) -> float:
        """The cost of each extra token in a pass of n, as a share of a step.

        In a band that was measured: interpolated in log n between the measured bands around it. In a band
        that was not: at most what the nearest smaller measured size costs per token. Per-token cost falls
        as passes grow, but not evenly, and a line drawn between far-apart sizes undercuts the middle: with
        one thread, calibration's 3-token pass and a 200-token prompt chunk priced a 32-token verification
        at 17 steps, and it took 25 (bench/verify_costs.py --threads 1: 33 tokens, 24 steps).
        `optimistic`: interpolated across unmeasured bands too (what a draft that measures one may hope for).
        """
        points = self._points
        if not points:
            return PRIOR_SLOPES[band(n)]
        i = bisect.bisect_right(self._sizes, n)  # the points at or below n
        if i == 0:  # smaller than anything measured: the prior curve's shape, through the nearest measured band
            m, s = points[0]
            return s * PRIOR_SLOPES[band(n)] / PRIOR_SLOPES[band(int(m))]
        m0, s0 = points[i - 1]
        if i == len(points):
            return s0 * PRIOR_SLOPES[band(n)] / PRIOR_SLOPES[band(int(m0))] if optimistic else s0
        if not optimistic and band(n) not in self.slopes:
            return s0
        m1, s1 = points[i]
        f = (math.log(n) - math.log(m0)) / (math.log(m1) - math.log(m0))
        return s0 + f * (s1 - s0)

    def measured(self, n: int) -> bool:
        """Whether passes of about n tokens were timed (else their cost is a bound: slope_at)."""
        return band(n) in self.slopes

    def _in_steps(self, seconds: float) -> float:
        return seconds / (self.plain_step or 1.0)

    def _in_seconds(self, steps: float | None) -> float | None:
        return None if steps is None else steps * (self.plain_step or 1.0)

    @property
    def draft_step(self) -> float | None:
        """Seconds per drafted token, now: what it cost in plain steps when timed, at today's step.

        Kept in steps because both models share the machine's cores: a draft step timed at load in a quiet
        moment, set against steps slowed by other work, prices the draft model cheaper than it is, and a probe
        it justifies first catches the draft model up on the whole reply (one took 2.2 s of a 13.7 s reply,
        js-fix-empty, whose plain steps ran at 0.11 s against t1 0.073 s as it began; bench/speculative.py --trace).
        """
        return self._in_seconds(self._draft_step)

    @property
    def draft_sync(self) -> float | None:
        return self._in_seconds(self._draft_sync)

    @property
    def draft_catch_up(self) -> float | None:
        return self._in_seconds(self._draft_catch_up)

    def observe_draft(self, sync_seconds: float | None, steps: int, step_seconds: float) -> None:
        if self.plain_step is None:  # in steps of nothing yet: a step of one second would make it look nearly free
            self._unpriced_draft.append(functools.partial(self.observe_draft, sync_seconds, steps, step_seconds))
            return
        if sync_seconds is not None:
            self._draft_sync = _mix(self._draft_sync, self._in_steps(sync_seconds))
        if steps > 0:
            self._draft_step = _mix(self._draft_step, self._in_steps(step_seconds / steps))

    def observe_catch_up(self, tokens: int, seconds: float) -> None:
        if self.plain_step is None:
            self._unpriced_draft.append(functools.partial(self.observe_catch_up, tokens, seconds))
            return
        if tokens > CATCH_UP_TOKENS:
            self._draft_catch_up = _mix(self._draft_catch_up, self._in_steps(seconds / tokens))

    def catch_up_cost(self, tokens: int, prior_step: float) -> float:
        """Seconds to catch the draft model up on `tokens` more than a round's usual sync.

        Until a catch-up was timed: a draft step's cost spread as the target's own passes of that many tokens
        spread theirs (the two models run the same kernels).
        """
        extra = max(0, tokens - CATCH_UP_TOKENS)
        if extra == 0:
            return 0.0
        if self.draft_catch_up is not None:
            return self.draft_catch_up * extra
        step = self.draft_step if self.draft_step is not None else prior_step
        return step * (1.0 + self.slope_at(extra) * (extra - 1))

    def target_cost(self, n: int, optimistic: bool = False) -> float:
        """Seconds of one target pass over n tokens (logits for all of them)."""
        t1 = self.plain_step or 1.0
        return t1 if n <= 1 else t1 * (1.0 + self.slope_at(n, optimistic) * (n - 1))

    def draft_cost(self, k: int, prior_step: float) -> float:
        step = self.draft_step if self.draft_step is not None else prior_step
        sync = self.draft_sync if self.draft_sync is not None else step
        return sync + step * max(k - 1, 0)


def head_share(model) -> float:
    """The output layer's share of one token's weights: what computing one more logits row costs, roughly."""
    header = model.header
    n_embd = int(header.arch_value("embedding_length", 0) or 0)
    return min(0.5, model.n_vocab * n_embd / max(model.n_params, 1))


def calibrate(seq, costs: CostModel, budget_s: float = CALIBRATION_BUDGET_S) -> None:
    """Time a few passes on an empty sequence (then empty it again): a first t1, the smallest verification, and a larger pass.

    Two single-token passes (the first warms up), then the faster of two 2-token passes with logits for both rows (a
    one-token draft's verification), then one pass of as many tokens as the budget still allows (up to
    CALIBRATION_MAX_TOKENS). The 2-token pass is timed whatever the budget: unmeasured, its band is priced
    by the prior (0.95 of a step per extra token), at which a one-token draft can never pay, so none is
    ever verified and the band is never measured. With one thread the budget held no multi-token pass at
    all, and a 2-token pass costs 1.5 steps there (bench/verify_costs.py --threads 1), so a one-token draft
    accepted 60 % of the time pays (bench/lookup_replay.py). The first prompt's chunks and the first drafts
    measure the rest.
    """
    if seq.tokens:
        return
    token = max(seq.model.bos_token, 0)
    started = time.perf_counter()
    try:
        # The fastest of two, as the draft model's step is timed: one busy moment priced a target step at 2.7x a draft
        # step of the same model (0.0396 against 0.0145 s), and a draft that can never pay then looked as if it could.
        single = _single_step(seq, token, timed=2)
        costs.observe_pass(1, single)
        # The fastest of two as well: nothing but a verification re-measures this band, and priced by one busy
        # moment (three steps, say) no short draft pays, none is verified, and lookup stays off for the session.
        costs.observe_pass(SMALLEST_VERIFICATION, min(_timed_pass(seq, [token] * SMALLEST_VERIFICATION) for _ in range(2)))
        n = int((budget_s - (time.perf_counter() - started)) / single)
        n = min(n, CALIBRATION_MAX_TOKENS, seq.model.n_batch, seq.n_ctx - 1)
        if n >= 2 * SMALLEST_VERIFICATION:
            costs.observe_pass(n, _timed_pass(seq, [token] * n))
    finally:
        seq.clear()


def _timed_pass(seq, tokens: list[int]) -> float:
    """Seconds of one pass over `tokens` with logits for every row, on the empty sequence (emptied again)."""
    started = time.perf_counter()
    seq.decode(tokens, all_logits=True)
    seconds = time.perf_counter() - started
    seq.clear()
    return seconds


def calibrate_draft(seq, costs: CostModel) -> None:
    """Time a draft-model step at load (then empty the sequence again), so the first reply already knows whether it can pay.

    Untimed, a draft model was assumed to pay until it drafted: the first reply read its prompt into it
    before the first token (5.7 s for a 755-token prompt with Qwen2.5-Coder-0.5B beside the 1.5B on two
    cores, where it can never pay: bench/draft_first_reply.py) and then probed it mid-reply.
    """
    if seq.tokens:
        return
    try:
        costs.observe_draft(None, 1, _single_step(seq, max(seq.model.bos_token, 0), timed=2))
    finally:
        seq.clear()


def _single_step(seq, token: int, timed: int) -> float:
    """Seconds of a single-token pass on the empty sequence: one to warm up, then the fastest of `timed` more
    (a busy moment only ever slows a step)."""
    _timed_pass(seq, [token])
    return min(_timed_pass(seq, [token]) for _ in range(timed))
