"""bench/lookup_replay.py --costs TRACE.jsonl: a pass-cost curve from what a traced run's passes cost in steps of their moment."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from lookup_replay import curve_from_trace  # noqa: E402  (bench/lookup_replay.py)


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _reply(step: float, passes: list[tuple[int, float]]) -> list[dict]:
    """A reply's trace: plain steps of `step` seconds, each (tokens, steps) pass between two of them."""
    lines: list[dict] = [{"event": "begin"}, {"event": "pass", "batch_tokens": 1, "decode_s": step}]
    for n, steps in passes:
        lines += [{"event": "pass", "batch_tokens": n, "decode_s": steps * step}, {"event": "pass", "batch_tokens": 1, "decode_s": step}]
    return lines


def test_each_size_costs_the_median_of_its_passes_in_the_steps_around_them(tmp_path):
    # The second reply runs at half the pace: its passes cost as many steps, and count alike.
    trace = _reply(0.1, [(2, 1.8), (4, 3.0), (2, 2.0)]) + _reply(0.2, [(2, 1.9), (33, 17.0)])
    curve = curve_from_trace(_write(tmp_path / "trace.jsonl", trace))
    assert curve == {"1": 1.0, "2": pytest.approx(1.9), "4": pytest.approx(3.0), "33": pytest.approx(17.0)}


def test_a_trace_with_no_pass_to_price_is_refused_with_how_to_make_one(tmp_path):
    plain_only = _reply(0.1, [])
    with pytest.raises(SystemExit, match="speculative.py --trace"):
        curve_from_trace(_write(tmp_path / "trace.jsonl", plain_only))


def test_a_trace_that_is_not_there_is_refused_with_how_to_make_one(tmp_path):
    with pytest.raises(SystemExit, match="cannot be read.*speculative.py --trace"):
        curve_from_trace(tmp_path / "missing.jsonl")


def test_a_line_that_is_not_a_json_object_is_refused_with_its_number(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps({"event": "begin"}) + "\n{not json\n")
    with pytest.raises(SystemExit, match=r"trace.jsonl:2: not a JSON object"):
        curve_from_trace(path)
