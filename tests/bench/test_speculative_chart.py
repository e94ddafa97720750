"""bench/speculative.py's chart: a run of `off` against the peer's plain alone has no ratio over off to draw, and its report survives."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from speculative import chart, chart_bars  # noqa: E402  (bench/speculative.py)


def report(modes: list[str], peer_modes: list[str]) -> dict:
    row = {
        "kind": "code-edit",
        "name": "js-modern",
        "modes": {m: {"ratio_over_off": 1.0 if m == "off" else 1.2} for m in modes},
        "peer": {m: {"ratio_over_plain": 1.0 if m == "plain" else 1.1} for m in peer_modes},
    }
    return {"prompts": [row], "modes": modes, "target": "t.gguf", "draft": "d.gguf", "threads": 1, "tokens": 256, "rounds": 2}


def test_off_against_the_peers_plain_alone_has_no_bars_and_draws_nothing(tmp_path):
    assert chart_bars(report(["off"], ["plain"])) == []
    path = tmp_path / "chart.png"
    assert chart(report(["off"], ["plain"]), path) is False  # it used to divide by zero bars, after the whole run
    assert not path.exists()


def test_each_mode_beside_off_and_each_peer_mode_beside_plain_is_a_bar():
    bars = chart_bars(report(["off", "auto", "lookup"], ["plain", "ngram-mod"]))
    row = report(["off", "auto", "lookup"], ["plain", "ngram-mod"])["prompts"][0]
    assert [(label, ratio(row)) for label, ratio in bars] == [("auto", 1.2), ("lookup", 1.2), ("peer ngram-mod", 1.1)]
