"""bench/pool_runs.py: rounds of several bench/speculative.py runs pooled into per-prompt verdicts, and the runs it refuses."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from pool_runs import pool  # noqa: E402  (bench/pool_runs.py)


def report(auto_by_prompt: dict[str, list[float]], peer_by_prompt: dict[str, dict[str, list[float]]], threads: int = 2) -> dict:
    """A bench/speculative.py --peer report as far as pooling reads it."""
    prompts = []
    for name, auto in auto_by_prompt.items():
        peer = {"plain": {"decode_tokens_per_s_runs": [10.0] * len(auto)}}
        peer.update({mode: {"decode_tokens_per_s_runs": runs} for mode, runs in peer_by_prompt[name].items()})
        prompts.append({"kind": "code-edit", "name": name, "modes": {"auto": {"decode_tokens_per_s_runs": auto}}, "peer": peer})
    return {"threads": threads, "target": "t.gguf", "tokens": 256, "prompts": prompts}


def test_two_runs_pool_their_rounds_and_a_steady_gap_becomes_a_verdict():
    # Alone, each run's two rounds leave every interval reaching across 1; pooled, four rounds tell a 20 % gap apart.
    peer = {"ngram-simple": [10.0, 10.0], "ngram-mod": [9.0, 9.0]}
    first = report({"ahead": [13.5, 10.8], "behind": [7.0, 9.2], "even": [10.0, 10.6]}, {"ahead": peer, "behind": peer, "even": peer})
    second = report({"ahead": [11.5, 12.5], "behind": [8.5, 7.5], "even": [10.4, 9.5]}, {"ahead": peer, "behind": peer, "even": peer})
    for alone in (first, second):
        assert pool([alone], "code-edit")["verdicts"] == {"faster": 0, "level": 3, "slower": 0}

    pooled = pool([first, second], "code-edit")
    by_name = {p["name"]: p for p in pooled["prompts"]}
    assert {name: p["rounds"] for name, p in by_name.items()} == {"ahead": 4, "behind": 4, "even": 4}
    assert {name: p["verdict"] for name, p in by_name.items()} == {"ahead": "faster", "behind": "slower", "even": "level"}
    assert by_name["ahead"]["peer_best_mode"] == "ngram-simple"
    assert by_name["ahead"]["auto_over_peer_best_paired"]["ratios"] == [1.35, 1.08, 1.15, 1.25]
    assert pooled["auto_over_peer_best_paired"]["pairs"] == 12
    assert pooled["verdicts"] == {"faster": 1, "level": 1, "slower": 1}


def test_the_same_run_given_twice_is_refused():
    run = report({"a": [12.0, 12.4]}, {"a": {"ngram-simple": [10.0, 10.3]}})
    with pytest.raises(SystemExit, match="the same run was given twice"):
        pool([run, copy.deepcopy(run)], "code-edit")


def test_runs_at_different_thread_counts_are_refused():
    one = report({"a": [12.0, 12.4]}, {"a": {"ngram-simple": [10.0, 10.3]}}, threads=1)
    two = report({"a": [12.1, 12.2]}, {"a": {"ngram-simple": [10.0, 10.3]}}, threads=2)
    with pytest.raises(SystemExit, match="threads"):
        pool([one, two], "code-edit")


def test_rounds_that_do_not_pair_up_are_refused():
    run = report({"a": [12.0, 12.4]}, {"a": {"ngram-simple": [10.0]}})
    with pytest.raises(SystemExit, match="do not pair up"):
        pool([run], "code-edit")
