"""What log-probabilities cost a reply's decoding: Lokal's API and llama-server's side by side.

Both serve the same model, with the same threads and one slot, and get the same greedy
chat request streamed, once without log-probabilities and once with each `top_logprobs`
setting. A request's decode speed is its tokens after the first over the time from the
first to the last text chunk (the prompt is cached after the first round on both). Every
round runs each setting on both servers back to back, their order alternating, so each
ratio is of runs a few seconds apart: per server, a setting's tok/s over the same
server's tok/s without log-probabilities in that round (what the figures cost), and per
setting Lokal's tok/s over the peer's; paired geometric means with 95 % intervals
(bench/ratios.py).

    .venv/bin/python bench/logprobs_cost.py --peer PATH/llama-server [--model starter|qwen2.5-coder-1.5b|PATH] \
        [--threads 2] [--tokens 96] [--rounds 6] [--json FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from peer import LlamaServer, exit_on_sigterm, wait_until_idle  # noqa: E402
from ratios import paired  # noqa: E402
from report import publish  # noqa: E402
from runtime.models import wheels  # noqa: E402
from serve_process import Served  # noqa: E402

N_CTX = 2048
QUESTION = "Count from 1 to 200, the numbers separated by commas, and nothing else."
SETTINGS: dict[str, dict[str, Any]] = {
    "none": {},
    "logprobs": {"logprobs": True},
    "top_5": {"logprobs": True, "top_logprobs": 5},
    "top_20": {"logprobs": True, "top_logprobs": 20},
}


def decode_rate(client: Any, model: str, tokens: int, extra: dict[str, Any]) -> dict[str, float]:
    """One streamed reply: tokens after the first over the seconds from the first text chunk to the last."""
    first = last = None
    entries = 0
    usage = None
    stream = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": QUESTION}], max_tokens=tokens, temperature=0.0, stream=True, stream_options={"include_usage": True}, **extra
    )
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        if chunk.choices and chunk.choices[0].delta.content:
            last = time.perf_counter()
            first = first or last
        if chunk.choices and chunk.choices[0].logprobs and chunk.choices[0].logprobs.content:
            entries += len(chunk.choices[0].logprobs.content)
    assert first is not None and last is not None and usage is not None, "the stream carried no text or no usage"
    n = usage.completion_tokens
    if extra:  # the figures really came, one per token (the last chunk may carry the end-of-text token's too)
        assert entries >= n - 1, (entries, n)
    return {"tok_s": (n - 1) / max(last - first, 1e-9), "tokens": n}


def model_path(name: str) -> str:
    if name in wheels.ALL:
        return str(wheels.ensure(wheels.ALL[name], log=lambda s: print(s, file=sys.stderr, flush=True)))
    return name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", required=True, help="llama-server built from the llama.cpp tree in the llama-cpp-python sdist")
    parser.add_argument("--model", default="smollm2-135m", help=f"one of {sorted(wheels.ALL)} or a GGUF path")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    exit_on_sigterm()
    path = model_path(args.model)

    lokal = Served("--model", path, "--n-threads", str(args.threads), "--parallel", "1", "--flash-attn", "on", n_ctx=N_CTX)
    peer = LlamaServer(args.peer, "-m", path, "-t", str(args.threads), "-tb", str(args.threads), "--parallel", "1", "-c", str(N_CTX), "-fa", "on")
    try:
        lokal_model = lokal.openai().models.list().data[0].id
        sides = {"lokal": (lokal.openai(), lokal_model), "peer": (peer.openai(), "peer")}
        rates: dict[str, dict[str, list[float]]] = {side: {s: [] for s in SETTINGS} for side in sides}
        tokens: dict[str, list[int]] = {side: [] for side in sides}
        for side, (client, model) in sides.items():  # warm-up: the prompt cached, the pages of the weights read
            decode_rate(client, model, 8, {})
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for setting, extra in SETTINGS.items():
                for side in order:
                    wait_until_idle()
                    client, model = sides[side]
                    run = decode_rate(client, model, args.tokens, extra)
                    rates[side][setting].append(run["tok_s"])
                    tokens[side].append(int(run["tokens"]))
            print(f"round {round_ + 1}/{args.rounds}", file=sys.stderr, flush=True)
    finally:
        lokal.close()
        peer.close()

    report: dict[str, Any] = {
        "what": "decode tok/s of a streamed greedy chat reply with log-probabilities over without, per server; Lokal over llama-server per setting",
        "model": Path(path).name,
        "threads": args.threads,
        "max_tokens": args.tokens,
        "rounds": args.rounds,
        "peer": peer.version(),
        "tokens_per_reply": {side: sorted(set(t)) for side, t in tokens.items()},
        "median_tok_s": {side: {s: round(statistics.median(v), 2) for s, v in by_setting.items()} for side, by_setting in rates.items()},
        "cost": {side: {s: paired(by_setting[s], by_setting["none"]) for s in SETTINGS if s != "none"} for side, by_setting in rates.items()},
        "lokal_over_peer": {s: paired(rates["lokal"][s], rates["peer"][s]) for s in SETTINGS},
    }
    publish(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
