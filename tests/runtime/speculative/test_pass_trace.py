"""The per-pass trace that benchmarks read to see where a slow reply's time went: every pass written, in agreement
with the reply's own figures, and nothing written unless asked for. The real starter model, in-process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.speculative.session import Speculation
from runtime.speculative.trace import TRACE_ENV
from spec_helpers import chat_prompt, load, run

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from pass_trace import PassTraceReader  # noqa: E402  (bench/pass_trace.py)

COPY = "Repeat this list exactly: apple, banana, cherry, damson, elderberry, fig, grape, apple, banana, cherry, damson."


def test_every_pass_of_a_reply_is_traced_as_the_reply_counts_it(starter_model, tmp_path, monkeypatch):
    trace_file = tmp_path / "trace.jsonl"
    reader = PassTraceReader(trace_file)
    monkeypatch.setenv(TRACE_ENV, str(trace_file))
    target = load(starter_model)
    speculation = Speculation(target, fixed_k=4)  # lookup drafts of 4 whatever they cost: drafted and plain passes both
    try:
        stats = run(target, chat_prompt(target, COPY), speculation.steppers_for("lookup"), max_tokens=40).stats
    finally:
        speculation.close()
        target.close()
    lines = [json.loads(line) for line in trace_file.read_text().splitlines()]
    assert [line["event"] for line in lines[:1]] == ["begin"] and lines[0]["mode"] == "lookup"
    passes = [line for line in lines if line["event"] == "pass"]
    assert len(passes) == stats.target_passes == len(lines) - 1
    assert sum(p["k"] for p in passes) == stats.draft_tokens > 0, "no lookup draft: the prompt no longer repeats itself for this model"
    assert sum(p["accepted"] for p in passes) == stats.draft_tokens_accepted
    assert all(p["decode_s"] > 0 and p["plan_s"] >= 0 and p["between_s"] >= 0 for p in passes), passes
    assert [line["t"] for line in lines] == sorted(line["t"] for line in lines)

    summary = reader.summary_of_new()
    assert summary["replies"] == 1 and summary["passes"] == stats.target_passes
    assert summary["by_drafter"]["lookup"]["drafted"] == stats.lookup_draft_tokens
    assert reader.summary_of_new()["passes"] == 0, "a second read sees only what was written since"


def test_nothing_is_written_unless_a_trace_is_asked_for(starter_model, tmp_path, monkeypatch):
    monkeypatch.delenv(TRACE_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    target = load(starter_model)
    speculation = Speculation(target, fixed_k=4)
    try:
        assert speculation.trace is None
        run(target, chat_prompt(target, COPY), speculation.steppers_for("lookup"), max_tokens=8)
    finally:
        speculation.close()
        target.close()
    assert not list(tmp_path.iterdir())


def test_a_trace_path_that_cannot_be_written_costs_the_trace_not_the_reply(starter_model, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv(TRACE_ENV, str(tmp_path / "no such folder" / "trace.jsonl"))
    target = load(starter_model)
    speculation = Speculation(target, fixed_k=4)
    try:
        traced = run(target, chat_prompt(target, COPY), speculation.steppers_for("lookup"), max_tokens=24)
        assert speculation.trace is not None and speculation.trace.failed
    finally:
        speculation.close()
        target.close()
    assert traced.stats.completion_tokens == 24 and traced.stats.draft_tokens > 0
    assert "cannot be written" in caplog.text
