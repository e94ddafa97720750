"""What a forward pass costs on this machine, measured as decoding goes (wall-clock).

The controller needs three figures: one target decode step (the plain rate),
the target verifying n tokens in one batch, and one draft-model step. Until a
figure is measured a prior stands in for it. Target passes are summarised by the
median of the last few: on a machine shared with other work a single pass can
take many times its usual time, and one such outlier must not decide for long.
"""

from __future__ import annotations

import collections
import statistics

SMOOTHING = 0.25  # weight of the newest draft-model measurement
WINDOW = 7  # target passes of each batch size kept for the median
# Before any batch was measured: verifying n tokens costs (1 + PRIOR_SLOPE * (n - 1)) single steps.
PRIOR_SLOPE = 0.3


def _mix(old: float | None, new: float) -> float:
    return new if old is None else old + SMOOTHING * (new - old)


class CostModel:
    def __init__(self) -> None:
        self.target: dict[int, float] = {}  # batch size -> seconds (median of the recent passes)
        self._recent: dict[int, collections.deque] = {}
        self.draft_step: float | None = None  # seconds per drafted token
        self.draft_sync: float | None = None  # seconds to catch the draft's cache up before drafting

    @property
    def plain_step(self) -> float | None:
        return self.target.get(1)

    def observe_target(self, n: int, seconds: float) -> None:
        recent = self._recent.setdefault(n, collections.deque(maxlen=WINDOW))
        recent.append(seconds)
        self.target[n] = statistics.median(recent)

    def observe_draft(self, sync_seconds: float | None, steps: int, step_seconds: float) -> None:
        if sync_seconds is not None:
            self.draft_sync = _mix(self.draft_sync, sync_seconds)
        if steps > 0:
            self.draft_step = _mix(self.draft_step, step_seconds / steps)

    def target_cost(self, n: int) -> float:
        """Seconds to verify n tokens in one target pass: measured, or interpolated from the sizes that were."""
        t1 = self.target.get(1) or 1.0
        if n in self.target:
            return self.target[n]
        slopes = [(t / t1 - 1.0) / (m - 1) for m, t in self.target.items() if m > 1]
        slope = max(0.0, sum(slopes) / len(slopes)) if slopes else PRIOR_SLOPE
        return t1 * (1.0 + slope * (n - 1))

    def draft_cost(self, k: int, prior_step: float) -> float:
        step = self.draft_step if self.draft_step is not None else prior_step
        sync = self.draft_sync if self.draft_sync is not None else step
        return sync + step * max(k - 1, 0)
