"""What a forward pass costs on this machine: measured at load, then refreshed from every step as decoding goes.

The controller needs what a target pass over n tokens costs (one plain step is
n = 1; a step of several replies, or a verification, carries more) and what one
draft-model step costs. A target pass is modelled as t(n) = t1 * (1 + slope * (n - 1)):
on a CPU each extra token in a batch costs about the same compute, so a line
through the measured passes prices a 64-token draft as well as a 4-token one,
without one stored curve. At load a short calibration (`calibrate`, a fraction
of a second) gives a first t1 and slope; from then on every decode step is an
observation: t1 is the median of the recent single-token passes, the slope the
median of the slopes the recent multi-token passes imply. Medians, because on a
machine shared with other work a single pass can take many times its usual
time, and one such outlier must not decide for long.
"""

from __future__ import annotations

import collections
import statistics
import time

SMOOTHING = 0.25  # weight of the newest draft-model measurement
WINDOW = 9  # single-token passes kept for t1's median
SLOPE_WINDOW = 15  # multi-token passes kept for the slope's median
MIN_SLOPE_TOKENS = 3  # passes of fewer tokens say too little about the slope (the noise of t1 dominates)
# Before anything was measured: verifying n tokens costs (1 + PRIOR_SLOPE * (n - 1)) single steps.
PRIOR_SLOPE = 0.3
CALIBRATION_BUDGET_S = 0.4  # at most this long, at load
CALIBRATION_MAX_TOKENS = 32


def _mix(old: float | None, new: float) -> float:
    return new if old is None else old + SMOOTHING * (new - old)


class CostModel:
    def __init__(self) -> None:
        self._single: collections.deque[float] = collections.deque(maxlen=WINDOW)
        self._slopes: collections.deque[float] = collections.deque(maxlen=SLOPE_WINDOW)
        self._passes: collections.deque[tuple[int, float]] = collections.deque(maxlen=SLOPE_WINDOW)
        self.plain_step: float | None = None  # t1, seconds
        self.slope: float = PRIOR_SLOPE
        self.draft_step: float | None = None  # seconds per drafted token
        self.draft_sync: float | None = None  # seconds to catch the draft's cache up before drafting

    def observe_target(self, n: int, seconds: float) -> None:
        if n <= 1:
            self._single.append(seconds)
            self.plain_step = statistics.median(self._single)
        elif n >= MIN_SLOPE_TOKENS:
            self._passes.append((n, seconds))
        if self.plain_step is not None and self._passes:
            t1 = self.plain_step
            self.slope = max(0.0, statistics.median((t / t1 - 1.0) / (m - 1) for m, t in self._passes))

    def observe_draft(self, sync_seconds: float | None, steps: int, step_seconds: float) -> None:
        if sync_seconds is not None:
            self.draft_sync = _mix(self.draft_sync, sync_seconds)
        if steps > 0:
            self.draft_step = _mix(self.draft_step, step_seconds / steps)

    def target_cost(self, n: int) -> float:
        """Seconds of one target pass over n tokens."""
        t1 = self.plain_step or 1.0
        return t1 * (1.0 + self.slope * max(n - 1, 0))

    def draft_cost(self, k: int, prior_step: float) -> float:
        step = self.draft_step if self.draft_step is not None else prior_step
        sync = self.draft_sync if self.draft_sync is not None else step
        return sync + step * max(k - 1, 0)


def calibrate(seq, costs: CostModel, budget_s: float = CALIBRATION_BUDGET_S) -> None:
    """Time a few passes on an empty sequence (then empty it again): a first t1 and slope for this machine.

    Two single-token passes (the first warms up), then one pass with logits for every token, as
    long as the budget allows (up to CALIBRATION_MAX_TOKENS). Stops early on a slow machine.
    """
    if seq.tokens:
        return
    token = max(seq.model.bos_token, 0)
    started = time.perf_counter()
    try:
        for _ in range(2):
            t0 = time.perf_counter()
            seq.decode((token,))
            seq.clear()
            single = time.perf_counter() - t0
        costs.observe_target(1, single)
        n = int((budget_s - (time.perf_counter() - started)) / (single * max(PRIOR_SLOPE, 0.1)))
        n = min(n, CALIBRATION_MAX_TOKENS, seq.model.n_batch, seq.n_ctx - 1)
        if n >= MIN_SLOPE_TOKENS:
            t0 = time.perf_counter()
            seq.decode([token] * n, all_logits=True)
            costs.observe_target(n, time.perf_counter() - t0)
    finally:
        seq.clear()
