"""What conversations resting in other seats cost the one that decodes.

The context's sequences share one unified KV cache (runtime/llama/llama_model.py), and
llama.cpp attends over every cell up to the highest one in use (llama_kv_cache::get_n_kv),
masking the other sequences' cells. So the conversations kept warm for an instant switch
back make each token of the one decoding slower. llama-server with --parallel 1 holds
only the conversation at hand. Since 6508662 the scheduler has resting seats whose state the KV
store holds give up their cells while a reply streams; bench/switch_back.py measures that
through the runtime.

This loads the model with 4 seats, reads --prompt tokens into seat 0, and times single-token
steps there (the median of --steps), alone and with --warm tokens resting in each of seats
1 to 3, alternating --rounds times, with flash attention as llama.cpp chooses (auto) and off.

    .venv/bin/python bench/warm_seats.py [--threads 1] [--warm 3000] [--prompt 800] [--steps 32] [--rounds 3] [--model PATH]
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runtime import paths  # noqa: E402
from runtime.gguf.reader import read_file_header  # noqa: E402
from runtime.llama.llama_model import LlamaModel, LoadSettings  # noqa: E402

SEATS = 4


def measure(model_path: str, threads: int, flash: bool | None, args) -> dict:
    settings = LoadSettings(path=model_path, n_ctx=4096, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=flash, n_threads=threads, n_seq=SEATS)
    model = LlamaModel(settings, read_file_header(model_path))
    text = "".join(Path(f).read_text() for f in sorted(glob.glob(str(ROOT / "runtime" / "**" / "*.py"), recursive=True)))
    tokens = model.tokenize(text, add_bos=False)
    need = args.prompt + args.steps + (SEATS - 1) * args.warm
    if len(tokens) < need:
        raise SystemExit(f"the sample text has {len(tokens)} tokens, {need} needed")
    active = model.sequences[0]
    active.decode_all(tokens[: args.prompt])
    probe = tokens[args.prompt : args.prompt + args.steps]

    def step_ms() -> float:
        times = []
        for token in probe:
            started = time.perf_counter()
            active.decode([token])
            times.append(time.perf_counter() - started)
        active.truncate(args.prompt)
        return statistics.median(times) * 1000

    alone, warm = [], []
    offset = args.prompt + args.steps
    for _ in range(args.rounds):
        alone.append(step_ms())
        for seat in model.sequences[1:]:
            seat.decode_all(tokens[offset : offset + args.warm])
            offset += args.warm
        warm.append(step_ms())
        for seat in model.sequences[1:]:
            seat.clear()
        offset = args.prompt + args.steps
    return {
        "flash_attn": "auto" if flash is None else flash,
        "alone_ms": round(statistics.median(alone), 2),
        "warm_ms": round(statistics.median(warm), 2),
        "warm_over_alone": round(statistics.median(w / a for w, a in zip(warm, alone)), 3),
        "alone_ms_runs": [round(x, 2) for x in alone],
        "warm_ms_runs": [round(x, 2) for x in warm],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--warm", type=int, default=3000, help="tokens resting in each of the other 3 seats")
    parser.add_argument("--prompt", type=int, default=800)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", default=str(paths.models_dir() / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
    args = parser.parse_args()
    report = {"model": Path(args.model).name, "seats": SEATS, "prompt_tokens": args.prompt, "warm_tokens_per_seat": args.warm, "runs": []}
    for threads in args.threads:
        for flash in (None, False):
            row = {"threads": threads, **measure(args.model, threads, flash, args)}
            print(json.dumps(row), file=sys.stderr)
            report["runs"].append(row)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
