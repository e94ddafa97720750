"""Ratios between two things measured side by side on a shared, noisy machine.

A ratio of two medians taken minutes apart moves with whatever else the host
runs. Runs made back to back (the same prompts, one server right after the
other) are paired instead: each pair gives one ratio, and the geometric mean of
those ratios comes with a 95 % interval, so a 4 % gap can be told from noise.
"""

from __future__ import annotations

import math
import statistics

# Student's t, two-sided 95 %, by degrees of freedom; 1.96 beyond the table.
_T95 = {1: 12.71, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def t95(degrees: int) -> float:
    """The table's value at the nearest tabulated degrees of freedom at or below `degrees` (so the interval errs wide)."""
    below = [d for d in _T95 if d <= degrees]
    return _T95[max(below)] if below else math.inf


def paired(ours: list[float], theirs: list[float]) -> dict:
    """ours[i] / theirs[i] over pairs of back-to-back runs: geometric mean, 95 % interval, and each pair's ratio."""
    logs = [math.log(a / b) for a, b in zip(ours, theirs) if a > 0 and b > 0]
    if not logs:
        return {"pairs": 0, "geomean": None, "low95": None, "high95": None, "ratios": []}
    mean = statistics.fmean(logs)
    half = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else math.inf
    bound = lambda x: round(math.exp(x), 3) if math.isfinite(x) else None
    return {
        "pairs": len(logs),
        "geomean": round(math.exp(mean), 3),
        "low95": bound(mean - half),
        "high95": bound(mean + half),
        "ratios": [round(math.exp(x), 3) for x in logs],
    }


def pooled(ratio_lists: list[list[float]]) -> dict:
    """Every pair's ratio of several `paired` results as one set of pairs: the geometric mean over all of them, with its interval."""
    ratios = [x for ratios_ in ratio_lists for x in ratios_]
    return paired(ratios, [1.0] * len(ratios))
