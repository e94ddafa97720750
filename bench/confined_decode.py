"""Decode speed of a runtime confined to fewer cores than the machine has, at its default thread count.

A runtime started under `taskset -c 0`, or in a container given one core of several, inherits that core mask.
This runs the runtime process confined to `--cores` cores (the first ones this process may use), loads the model
without naming a thread count, and times greedy replies. Compare two versions with bench/paired.py:

    .venv/bin/python bench/paired.py --baseline /path/to/old/checkout --rounds 3 \\
        --figure decode_tokens_per_s -- bench/confined_decode.py --cores 1

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.client import RuntimeClient  # noqa: E402
from runtime.models import wheels  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402

PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle. (variant {i})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=1, help="how many cores the runtime may run on")
    parser.add_argument("--replies", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the starter model)")
    args = parser.parse_args()
    mask = sorted(os.sched_getaffinity(0))
    if len(mask) <= args.cores:
        raise SystemExit(f"this process may run on {len(mask)} cores: confining it to {args.cores} tests nothing")
    os.sched_setaffinity(0, mask[: args.cores])  # the runtime process inherits it
    model = args.model or str(wheels.path_of(wheels.STARTER))
    client = RuntimeClient()
    try:
        client.initialize("bench")
        client.load_model(ModelLoadParams(path=model, n_ctx=1024))
        speeds = []
        for i in range(args.replies):
            params = ChatGenerateParams(f"c{i}", [ChatMessage("user", PROMPT.format(i=i))], max_tokens=args.tokens, temperature=0.0, speculation="off")
            result = client.chat(params, timeout=600)
            speeds.append(result.stats.decode_tokens_per_s)
    finally:
        client.close()
    print(json.dumps({"cores": args.cores, "machine_cores": len(mask), "model": os.path.basename(model),
                      "decode_tokens_per_s": statistics.median(speeds), "decode_tokens_per_s_each": speeds}, indent=2))


if __name__ == "__main__":
    main()
