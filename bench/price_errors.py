"""How well the cost model priced each pass of a traced run before it ran: its prices replayed against the times.

bench/speculative.py --trace FILE records every target pass of every `auto`
reply: its size and its seconds inside llama_decode. This feeds those passes,
in order, through runtime/speculative/costs.py's CostModel, as the runtime did
(without the prompt chunks and the calibration at load, which the trace does
not hold), and before each pass of two or more tokens whose size band was
already timed, compares the price the model gave it with the time it took.

The machine's own pace moves under a run (other work comes and goes), so a rule
that prices a pass from passes timed in other moments shows it here. Run it from
two trees on the same trace to compare their rules, each pass priced by both:

    .venv/bin/python bench/price_errors.py TRACE.jsonl [TRACE2.jsonl ...] [--out FILE]
    (cd <other checkout> && .venv/bin/python bench/price_errors.py TRACE.jsonl)

It prints JSON: per trace and over all, by size band and in all, the passes
priced, the median of |log(price / time)| (0.1 is about 10 % off), and the
mean of log(price / time) (below 0: passes were priced cheaper than they ran);
then the same for the price in plain steps (the price over the model's step)
against the pass's time in the plain steps timed around it, which is what
decides whether a draft pays.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runtime.speculative.costs import CostModel, band  # noqa: E402


NEIGHBOURS = 3  # plain steps either side of a pass that say what a step cost at its moment


def priced_passes(lines: list[dict]) -> list[tuple[int, float, float, float | None]]:
    """(tokens, price, seconds, price in steps over the pass's cost in the steps around it) of every multi-token pass
    priced from its band's earlier passes, in trace order.

    The last figure is what a drafting choice turns on: a draft pays if its pass costs fewer steps than the tokens it
    is expected to yield, so a pass priced in seconds can be off with the step, and the choice still right. The steps
    around a pass are up to NEIGHBOURS plain passes of the same reply either side of it (the later ones too: they are
    the moment's pace, not the model's estimate of it).
    """
    passes = [line for line in lines if line.get("event") in ("pass", "begin")]
    costs = CostModel()
    out: list[tuple[int, float, float, float | None]] = []
    for i, line in enumerate(passes):
        if line["event"] != "pass" or not line.get("decode_s"):
            continue
        n, seconds = int(line["batch_tokens"]), float(line["decode_s"])
        if n >= 2 and costs.plain_step is not None and costs.measured(n):
            price = costs.target_cost(n)
            local = steps_around(passes, i)
            out.append((n, price, seconds, (price / costs.plain_step) / (seconds / local) if local else None))
        costs.observe_pass(n, seconds)
    return out


def steps_around(passes: list[dict], i: int) -> float | None:
    """What a plain step cost at the moment of passes[i]: the median of up to NEIGHBOURS plain passes of the same reply
    either side of it (None if fewer than two)."""
    steps = []
    for direction in (-1, 1):
        j, found = i + direction, 0
        while 0 <= j < len(passes) and passes[j]["event"] == "pass" and found < NEIGHBOURS:
            if passes[j]["batch_tokens"] == 1 and passes[j].get("decode_s"):
                steps.append(passes[j]["decode_s"])
                found += 1
            j += direction
    return statistics.median(steps) if len(steps) >= 2 else None


def errors(priced: list[tuple[int, float, float, float | None]]) -> dict:
    if not priced:
        return {"passes": 0}
    seconds = [math.log(price / took) for _, price, took, _ in priced]
    steps = [math.log(ratio) for *_, ratio in priced if ratio is not None]
    return {
        "passes": len(priced),
        "seconds": {"median_abs_log_error": round(statistics.median(abs(e) for e in seconds), 4), "mean_log_error": round(statistics.fmean(seconds), 4)},
        "in_steps_of_the_moment": {
            "passes": len(steps),
            "median_abs_log_error": round(statistics.median(abs(e) for e in steps), 4) if steps else None,
            "mean_log_error": round(statistics.fmean(steps), 4) if steps else None,
        },
    }


def report(priced: list[tuple[int, float, float, float | None]]) -> dict:
    bands = sorted({band(p[0]) for p in priced})
    return {"all": errors(priced), "by_band": {str(b): errors([p for p in priced if band(p[0]) == b]) for b in bands}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", type=Path, help="JSONL files written by bench/speculative.py --trace")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    missing = [str(t) for t in args.traces if not t.is_file()]
    if missing:
        parser.error(f"no such trace: {', '.join(missing)} (bench/speculative.py --trace FILE writes one)")
    every: list[tuple[int, float, float, float | None]] = []
    per_trace = {}
    for trace in args.traces:
        lines = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
        priced = priced_passes(lines)
        every += priced
        per_trace[str(trace)] = report(priced)
    tree = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    out = {"tree": tree, "command": " ".join(["bench/price_errors.py", *sys.argv[1:]]), "all_traces": report(every), "traces": per_trace}
    text = json.dumps(out, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
