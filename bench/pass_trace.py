"""Reads the runtime's per-pass trace (runtime/speculative/trace.py) a run at a time, and sums up where its time went."""

from __future__ import annotations

import json
from pathlib import Path


class PassTraceReader:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")  # this run's trace only
        self.offset = 0

    def new_lines(self) -> list[dict]:
        with self.path.open("rb") as trace:
            trace.seek(self.offset)
            data = trace.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        return [json.loads(line) for line in complete.splitlines() if line.strip()]

    def summary_of_new(self) -> dict:
        return summarise(self.new_lines())


def summarise(lines: list[dict]) -> dict:
    """Per drafter: passes, drafted and accepted tokens, seconds in llama_decode; and the seconds outside it."""
    passes = [line for line in lines if line.get("event") == "pass"]
    begins = [line for line in lines if line.get("event") == "begin"]
    by_drafter: dict[str, dict] = {}
    for p in passes:
        row = by_drafter.setdefault(p["drafter"] or "plain", {"passes": 0, "drafted": 0, "accepted": 0, "decode_s": 0.0})
        row["passes"] += 1
        row["drafted"] += p["k"]
        row["accepted"] += p["accepted"]
        row["decode_s"] += p["decode_s"] or 0.0
    for row in by_drafter.values():
        row["decode_s"] = round(row["decode_s"], 3)
    between = [p["between_s"] for p in passes if p["between_s"] is not None]
    slowest = sorted(passes, key=lambda p: p["decode_s"] or 0.0, reverse=True)[:3]
    return {
        "replies": len(begins),
        "begin_s": round(sum(b["seconds"] for b in begins), 3),
        "passes": len(passes),
        "decode_s": round(sum(p["decode_s"] or 0.0 for p in passes), 3),
        "plan_s": round(sum(p["plan_s"] for p in passes), 3),
        "between_s": round(sum(between), 3),
        "longest_between_s": round(max(between, default=0.0), 3),
        "first_to_last_pass_s": round(passes[-1]["t"] - passes[0]["t"], 3) if len(passes) > 1 else 0.0,
        "by_drafter": by_drafter,
        "slowest_passes": [{k: p[k] for k in ("drafter", "k", "accepted", "match", "batch_tokens", "decode_s")} for p in slowest],
    }
