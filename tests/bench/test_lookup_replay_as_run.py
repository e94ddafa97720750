"""bench/lookup_replay.py --as-run: each prompt replayed from the prices the runtime had when the run began it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from lookup_replay import Curve, lokal, priced_as, prices_as_run  # noqa: E402  (bench/lookup_replay.py)

CHEAP_LONG = {"2": [2, 0.9], "4": [4, 0.9], "8": [10, 0.9], "16": [20, 0.3], "32": [40, 0.3], "64": [64, 0.3]}
DEAR_LONG = {"2": [2, 0.9], "4": [4, 0.9], "8": [10, 0.9], "16": [20, 0.95], "32": [40, 0.95], "64": [64, 0.95]}


def _run(tmp_path: Path, names: list[str], rounds: int, begins: list[dict]) -> tuple[Path, Path]:
    trace = tmp_path / "trace.jsonl"
    lines = []
    for slopes in begins:
        lines += [{"event": "begin", "mode": "auto", "slopes": slopes}, {"event": "pass", "batch_tokens": 1, "decode_s": 0.1}]
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"rounds": rounds, "prompts": [{"name": name} for name in names]}))
    return trace, run


def test_each_prompt_gets_the_prices_its_first_reply_began_with(tmp_path):
    begins = [{"2": [2, 0.1 * i]} for i in range(6)]  # three prompts, two rounds each, in the run's order
    trace, run = _run(tmp_path, ["a", "b", "c"], 2, begins)
    assert prices_as_run(trace, run) == {"a": {"2": [2, 0.0]}, "b": {"2": [2, 0.2]}, "c": {"2": [2, 0.4]}}


def test_a_trace_of_another_run_is_refused_with_what_to_give(tmp_path):
    trace, run = _run(tmp_path, ["a", "b"], 2, [{}, {}, {}])
    with pytest.raises(SystemExit, match="3 `auto` replies began.*2 prompts 2 times each.*one bench/speculative.py run"):
        prices_as_run(trace, run)


def test_a_json_that_is_not_a_run_report_is_refused(tmp_path):
    trace, run = _run(tmp_path, ["a"], 1, [{}])
    run.write_text(json.dumps({"prompts": "none"}))
    with pytest.raises(SystemExit, match="not a bench/speculative.py --json report"):
        prices_as_run(trace, run)


def test_the_prices_are_held_at_each_band():
    costs = priced_as(CHEAP_LONG)
    for size, slope in CHEAP_LONG.values():
        assert costs.measured(size) and costs.slope_at(size) == pytest.approx(slope)


def test_the_prices_decide_how_long_the_drafts_of_a_copy_go():
    # A reply that copies 120 tokens of its prompt: where long passes cost little, the copy is verified in long drafts.
    prompt = list(range(1000, 1300))
    reply = prompt[40:160]
    curve = Curve({"1": 1.0, "2": 1.9, "64": 20.0})
    longest = {}
    for name, prices in (("cheap", CHEAP_LONG), ("dear", DEAR_LONG)):
        trace: list = []
        result = lokal(prompt, reply, curve, set(), trace, prices=prices)
        assert result["kept"] > 0
        longest[name] = max(t["drafted"] for t in trace)
    assert longest["cheap"] >= 32 and longest["dear"] < longest["cheap"]
