"""bench/price_errors.py: the cost model's prices replayed against a trace's passes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from price_errors import errors, priced_passes  # noqa: E402  (bench/price_errors.py)


def _reply(step: float, two_token: float, passes: int = 12) -> list[dict]:
    lines = [{"event": "begin"}]
    for i in range(passes):
        n, seconds = (2, two_token) if i % 3 == 2 else (1, step)
        lines.append({"event": "pass", "batch_tokens": n, "decode_s": seconds})
    return lines


def test_a_pass_whose_cost_in_steps_holds_is_priced_right_in_steps_after_the_machine_slows():
    # Every pass slows alike: a 2-token pass costs 1.9 steps before and after. Priced in steps of the moment, the
    # price in steps stays right; its seconds lag the new pace, which the figure in seconds shows.
    trace = _reply(0.1, 0.19) + _reply(0.2, 0.38)
    priced = priced_passes(trace)
    assert [n for n, *_ in priced] == [2] * 7  # every 2-token pass after the first one of its band
    assert [in_steps for *_, in_steps in priced] == pytest.approx([1.0] * 7)  # price in steps over cost in steps
    report = errors(priced)
    assert report["in_steps_of_the_moment"]["median_abs_log_error"] == pytest.approx(0.0, abs=1e-9)
    assert report["seconds"]["mean_log_error"] < 0  # priced at the quiet pace for a while: cheaper than they ran


def test_a_trace_with_nothing_to_price_says_so():
    assert errors(priced_passes(_reply(0.1, 0.19, passes=2))) == {"passes": 0}


def test_a_trace_that_is_not_there_is_refused_with_how_to_make_one(tmp_path):
    import subprocess

    script = Path(__file__).resolve().parents[2] / "bench" / "price_errors.py"
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "none.jsonl")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no such trace" in done.stderr and "--trace" in done.stderr
