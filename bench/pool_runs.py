"""Several runs of bench/speculative.py --peer, one runtime, one thread count: every round of every run as one set of pairs.

One run gives each prompt two or three pairs (Lokal's `auto` against the peer's
best n-gram mode, run back to back), and with two or three pairs the interval
of a 5 % gap nearly always reaches across 1: no prompt can be shown level,
faster or slower. Runs of the same runtime on other days are more pairs of the
same comparison, each pair still made within one moment. This pools them:

  - per prompt, the peer's best mode chosen by the median of all its runs, and
    each round's `auto` run over that mode's run of the same round;
  - the same with each round's best mode chosen by the other rounds only
    (speculative.py's held-out comparison, which does not let a mode's lucky run
    choose it);
  - a verdict per prompt from the held-out interval: "faster" (above 1),
    "slower" (below 1) or "level" (it reaches across 1);
  - both pooled over every prompt.

Runs must share the thread count, the target model and the reply length, and
should come from the same runtime (a tree whose drafting differs is another
comparison: give its runs alone).

    .venv/bin/python bench/pool_runs.py docs/benchmarks/speculative_code_edit.json /tmp/new_run.json [--kind code-edit]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ratios import paired, pooled  # noqa: E402
from report import publish  # noqa: E402
from speculative import auto_over_peer_best_held_out  # noqa: E402

SAME = ("threads", "target", "tokens")


def merged_rows(reports: list[dict], kind: str) -> list[dict]:
    """Each prompt's rows of every report as one row: the `auto` runs and each peer mode's runs, round after round."""
    rows: dict[str, dict] = {}
    for report in reports:
        for row in report["prompts"]:
            if row["kind"] != kind or "auto" not in row["modes"] or "peer" not in row:
                continue
            auto = row["modes"]["auto"]["decode_tokens_per_s_runs"]
            peer = {m: p["decode_tokens_per_s_runs"] for m, p in row["peer"].items() if m != "plain"}
            if any(len(runs) != len(auto) for runs in peer.values()):
                raise SystemExit(f"{row['name']}: the peer's runs and auto's do not pair up round by round")
            merged = rows.setdefault(row["name"], {"name": row["name"], "modes": {"auto": {"decode_tokens_per_s_runs": []}}, "peer": {}})
            merged["modes"]["auto"]["decode_tokens_per_s_runs"] += auto
            for mode, runs in peer.items():
                merged["peer"].setdefault(mode, {"decode_tokens_per_s_runs": []})["decode_tokens_per_s_runs"] += runs
    return list(rows.values())


def verdict(interval: dict) -> str:
    if interval.get("low95") is not None and interval["low95"] > 1.0:
        return "faster"
    if interval.get("high95") is not None and interval["high95"] < 1.0:
        return "slower"
    return "level"


def pool(reports: list[dict], kind: str) -> dict:
    seen = set()
    for report in reports:
        auto_runs = json.dumps([row["modes"].get("auto", {}).get("decode_tokens_per_s_runs") for row in report["prompts"]])
        if auto_runs in seen:
            raise SystemExit("the same run was given twice (a copy of a report under another name?)")
        seen.add(auto_runs)
    for key in SAME:
        if len({str(r.get(key)) for r in reports}) > 1:
            raise SystemExit(f"the runs differ in {key}: {[r.get(key) for r in reports]}")
    prompts = []
    for row in merged_rows(reports, kind):
        ours = row["modes"]["auto"]["decode_tokens_per_s_runs"]
        runs = {m: p["decode_tokens_per_s_runs"] for m, p in row["peer"].items()}
        best = max(runs, key=lambda m: statistics.median(runs[m]))
        held_out = auto_over_peer_best_held_out(row).get("auto_over_peer_best_held_out_paired", {})
        prompts.append(
            {
                "name": row["name"],
                "rounds": len(ours),
                "peer_best_mode": best,
                "auto_over_peer_best_paired": paired(ours, runs[best]),
                "auto_over_peer_best_held_out_paired": held_out,
                "verdict": verdict(held_out),
            }
        )
    verdicts = [p["verdict"] for p in prompts]
    return {
        "runs": [{key: r.get(key) for key in ("command", "date", "tree", "rounds")} for r in reports],
        "kind": kind,
        "threads": reports[0].get("threads"),
        "prompts": prompts,
        "auto_over_peer_best_paired": pooled([p["auto_over_peer_best_paired"]["ratios"] for p in prompts]),
        "auto_over_peer_best_held_out_paired": pooled([p["auto_over_peer_best_held_out_paired"].get("ratios", []) for p in prompts]),
        "verdicts": {v: verdicts.count(v) for v in ("faster", "level", "slower")},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="JSON reports of bench/speculative.py --peer")
    parser.add_argument("--kind", default="code-edit")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    publish(pool([json.loads(p.read_text()) for p in args.runs], args.kind), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
