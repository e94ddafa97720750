"""What speculative decoding can gain on this machine: the cost of verifying k tokens in one target pass.

Speculation pays only when one pass over k+1 tokens costs much less than k+1
single-token passes. This measures, at a realistic context length, the time of
one target pass over n tokens (logits for every row, as verification needs) for
n from 1 to 65 (or `--sizes`), and one draft-model step, each the median of several passes, sizes
interleaved so a busy moment does not favour one size. From the curve it derives
the best speed-up any drafter could reach if every drafted token were accepted:
max over k of (k + 1) / cost(k + 1).

    .venv/bin/python bench/verify_costs.py [--context 1000] [--reps 5] [--sizes 1-70]

`--sizes` times every size in the ranges given (a comma list of n or a-b), for a fine curve: on this CPU a
pass whose size is a multiple of 16 costs less than the sizes on either side of it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import charts  # noqa: E402  (bench/charts.py)
from runtime.llama.llama_model import LlamaModel, LoadSettings  # noqa: E402
from runtime.gguf.reader import read_file_header  # noqa: E402
from runtime.models import wheels  # noqa: E402
from report import publish

SIZES = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 33, 49, 65]
FILLER = "def scale(values, factor):\n    return [v * factor for v in values]\n\n"


def parse_sizes(text: str) -> list[int]:
    """'1-4,16,33' -> [1, 2, 3, 4, 16, 33]; size 1 (the plain step every cost is measured in) is always in."""
    sizes = {1}
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        sizes.update(range(int(low), int(high or low) + 1))
    if min(sizes) < 1:
        raise argparse.ArgumentTypeError("sizes are at least 1 token")
    return sorted(sizes)


def load(path: str, n_ctx: int, threads: int, flash: bool | None = None, n_seq: int = 1) -> LlamaModel:
    """The model on the CPU with an f16 cache; flash attention as llama.cpp chooses it unless `flash` says."""
    return LlamaModel(LoadSettings(path, n_ctx, 0, "f16", "f16", flash, threads, n_seq=n_seq), read_file_header(path))


def fill(model: LlamaModel, n: int) -> list[int]:
    tokens = model.tokenize(FILLER * (n // 10 + 40), add_bos=False)
    model.decode_all(tokens[:n])
    return tokens


def pass_seconds(model: LlamaModel, tokens: list[int], base: int, n: int) -> float:
    model.truncate(base)
    started = time.perf_counter()
    model.decode(tokens[base : base + n], all_logits=True)
    return time.perf_counter() - started


def chart(report: dict, path: Path) -> bool:
    plt = charts.pyplot()
    if plt is None:
        return False
    sizes = [int(n) for n in report["target_pass_in_steps"]]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(sizes, [report["target_pass_in_steps"][str(n)] for n in sizes], "o-", label="one pass over n tokens (this machine)")
    ax.plot(sizes, sizes, "--", color="grey", label="n single steps")
    ax.plot(sizes, [1 + (n - 1) * 33 / 95 for n in sizes], ":", color="black", label="the issue's CPU (k/95 s vs 1/33 s)")
    ax.set_xlabel("tokens in one target pass (k drafted + 1)")
    ax.set_ylabel("cost, in plain decode steps")
    title = f"Verification cost, {report['target']}, {report['threads']} threads, context {report['context']}\nbest possible speed-up with every draft accepted: {report['best_speedup_if_all_accepted']:.2f}x"
    return charts.save(fig, ax, path, title)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--context", type=int, default=1000, help="tokens already in the cache when a pass runs")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sizes", type=parse_sizes, default=SIZES, help="pass sizes to time: n or a-b, comma separated")
    parser.add_argument("--chart", type=Path, default=Path("bench/out/verify_costs.png"))
    args = parser.parse_args()
    log = lambda s: print(s, file=sys.stderr, flush=True)
    target_path = str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=log))
    draft_path = str(wheels.ensure(wheels.QWEN_CODER_0_5B, log=log))
    sizes = args.sizes
    n_ctx = args.context + max(sizes) + 16

    target = load(target_path, n_ctx, args.threads)
    tokens = fill(target, args.context)
    times: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(args.reps):
        for n in sizes:
            times[n].append(pass_seconds(target, tokens, args.context, n))
    target.close()
    draft = load(draft_path, n_ctx, args.threads)
    fill(draft, args.context)
    draft_steps = [pass_seconds(draft, tokens, args.context, 1) for _ in range(args.reps * 2)]
    draft.close()

    step = statistics.median(times[1])
    in_steps = {n: statistics.median(v) / step for n, v in times.items()}
    best_k = max((n - 1 for n in sizes if n > 1), key=lambda k: (k + 1) / in_steps[k + 1])
    report = {
        "target": Path(target_path).name,
        "draft": Path(draft_path).name,
        "threads": args.threads,
        "context": args.context,
        "reps": args.reps,
        "target_step_ms": round(step * 1000, 1),
        "target_pass_in_steps": {str(n): round(c, 3) for n, c in in_steps.items()},
        "draft_step_in_target_steps": round(statistics.median(draft_steps) / step, 3),
        "best_speedup_if_all_accepted": round((best_k + 1) / in_steps[best_k + 1], 3),
        "best_k": best_k,
    }
    report["chart"] = str(args.chart) if chart(report, args.chart) else None
    publish(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
