"""What speculation's decisions cost in Python per step: finding the lookup match, pricing drafts, learning from each pass.

Every step of a speculative reply runs, besides llama_decode, Lokal's own Python:
the n-gram index's match (lookup.py), the draft length's expected-speed choice
(adaptive.py, costs.py), and after the pass what the verdict teaches (copy runs,
replaced tokens, the cost model's bands). On a CPU a step of Qwen2.5-Coder-1.5B
takes 60-120 ms and this work well under 1 ms; on a GPU a step can take a few
ms, and then it counts. This replays the recorded greedy replies of
bench/lookup_replay.py through the runtime's Drafting, as that script does, and
times only those calls: microseconds per step, the median of --rounds rounds
over all code-edit replies.

Run it in two trees (bench/paired.py, with this script copied into the older
one) to see what a change to that code costs or saves.

    .venv/bin/python bench/plan_overhead.py [--replies bench/out/replies.json] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import lookup_replay  # noqa: E402  (bench/lookup_replay.py)
from report import publish  # noqa: E402

from runtime.speculative.costs import CostModel  # noqa: E402
from runtime.speculative.decoder import Drafting  # noqa: E402

CALLS = ("propose", "judged", "score_shadow", "observe_pass")
spent = dict.fromkeys(CALLS, 0.0)


def timed(cls: type, name: str):
    method = getattr(cls, name)

    def call(self, *args, **kwargs):
        began = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - began

    return call


class TimedDrafting(Drafting):
    propose = timed(Drafting, "propose")
    judged = timed(Drafting, "judged")
    score_shadow = timed(Drafting, "score_shadow")


class TimedCostModel(CostModel):
    observe_pass = timed(CostModel, "observe_pass")


def one_round(replies: dict, curve: lookup_replay.Curve) -> tuple[int, dict[str, float]]:
    for name in CALLS:
        spent[name] = 0.0
    steps = 0
    for item in replies["prompts"]:
        if item["kind"] != "code-edit":
            continue
        result = lookup_replay.lokal(item["prompt"], item["reply"], curve, set(replies["ends"]), None, warm=True)
        steps += len(result["passes"])
    return steps, dict(spent)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replies", type=Path, default=Path("bench/out/replies.json"), help="recorded by bench/lookup_replay.py")
    parser.add_argument("--costs", type=Path, default=Path("docs/benchmarks/verify_costs.json"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not args.replies.exists():
        raise SystemExit(f"{args.replies}: no recorded replies; record them once with .venv/bin/python bench/lookup_replay.py")
    replies = json.loads(args.replies.read_text())
    curve = lookup_replay.Curve(json.loads(args.costs.read_text())["target_pass_in_steps"])
    # The replay builds its planner from these names: timed subclasses put in their place, which mypy takes for
    # assigning to a class.
    lookup_replay.Drafting, lookup_replay.CostModel = TimedDrafting, TimedCostModel  # type: ignore[misc]
    rounds = [one_round(replies, curve) for _ in range(args.rounds)]
    steps = rounds[0][0]
    per_step = lambda name: round(statistics.median(r[1][name] for r in rounds) / steps * 1e6, 1)
    publish(
        {
            "replies": str(args.replies),
            "steps": steps,
            "rounds": args.rounds,
            "us_per_step": round(statistics.median(sum(r[1].values()) for r in rounds) / steps * 1e6, 1),
            "us_per_step_by_call": {name: per_step(name) for name in CALLS},
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
