"""`n` choices of one long prompt: what the extra choices cost, Lokal beside llama-server.

Each request is a fresh ~1,500-token prompt (a tag of its own in its first line, so neither server has any of
it cached, nor Lokal's KV store from an earlier run) with a short question after it, sampled, 32 tokens a choice, answered whole. Per round and
server: the seconds of a request with one choice, and of one with `n` (both servers with `n` seats, so every
choice decodes at once). llama-server reads the prompt once and copies its cells to the other choices; a
server that reads it once per choice pays about `n` times the prompt. Figures: per server, the median
seconds, and `n` choices over one (paired per round: what the other choices cost); Lokal's seconds over
llama-server's for `n` choices; and the bytes Lokal's cache folder (a new one each run) holds after: the KV states the requests left. Paired geometric means with 95 % intervals (bench/ratios.py).

    .venv/bin/python bench/shared_prompt.py [--peer PATH/llama-server] [--model starter|PATH] [--threads 2] \
        [--n 4] [--rounds 5] [--json FILE]

Without --peer, Lokal alone (for bench/paired.py, against an older checkout).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
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

N_CTX = 2048  # a sequence's (Lokal's --n-ctx; llama-server's -c is every slot's together)
DOCUMENT = (ROOT / "README.md").read_text(encoding="utf-8")[:5500]
TOKENS = 32


def ask(client: Any, model: str, tag: str, n: int) -> dict[str, float]:
    """One request: its seconds, and the prompt tokens it reports."""
    messages = [{"role": "user", "content": f"Request {tag}.\n\n{DOCUMENT}\n\nWhat is this document about, in one sentence?"}]
    started = time.perf_counter()
    reply = client.chat.completions.create(model=model, messages=messages, n=n, max_tokens=TOKENS, temperature=0.8, seed=5)
    seconds = time.perf_counter() - started
    assert len(reply.choices) == n and all(c.message.content for c in reply.choices), reply
    return {"s": seconds, "prompt_tokens": reply.usage.prompt_tokens}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", default=None, help="llama-server built from the llama.cpp tree in the llama-cpp-python sdist")
    parser.add_argument("--model", default="smollm2-135m", help=f"one of {sorted(wheels.ALL)} or a GGUF path")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    exit_on_sigterm()
    path = args.model
    if path in wheels.ALL:
        path = str(wheels.ensure(wheels.ALL[path], log=lambda s: print(s, file=sys.stderr, flush=True)))

    cache = tempfile.TemporaryDirectory(prefix="lokal-shared-prompt-")
    env = dict(os.environ, LOKAL_CACHE_DIR=cache.name)
    servers: dict[str, Any] = {"lokal": Served("--model", path, "--n-threads", str(args.threads), "--parallel", str(args.n), "--flash-attn", "on", n_ctx=N_CTX, env=env)}
    try:
        if args.peer:
            servers["peer"] = LlamaServer(args.peer, "-m", path, "-t", str(args.threads), "-tb", str(args.threads), "--parallel", str(args.n), "-c", str(N_CTX * args.n), "-fa", "on")
        sides = {"lokal": (servers["lokal"].openai(), servers["lokal"].openai().models.list().data[0].id)}
        if "peer" in servers:
            sides["peer"] = (servers["peer"].openai(), "peer")
        seconds: dict[str, dict[str, list[float]]] = {side: {"one": [], "n": []} for side in sides}
        prompt_tokens: dict[str, set[int]] = {side: set() for side in sides}
        for side, (client, model) in sides.items():  # warm-up: the weights' pages read
            ask(client, model, f"warm-up {side}", 1)
        run_tag = secrets.token_hex(4)
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for side in order:
                client, model = sides[side]
                for kind, n in (("one", 1), ("n", args.n)):
                    wait_until_idle()
                    run = ask(client, model, f"{run_tag}-{round_}-{kind}", n)
                    seconds[side][kind].append(run["s"])
                    prompt_tokens[side].add(int(run["prompt_tokens"]))
            print(f"round {round_ + 1}/{args.rounds}", file=sys.stderr, flush=True)
    finally:
        for server in servers.values():
            server.close()
    left = sum(f.stat().st_size for f in Path(cache.name).rglob("*") if f.is_file())
    cache.cleanup()

    report: dict[str, Any] = {
        "what": f"seconds of a chat request with {args.n} sampled choices of a fresh ~1,500-token prompt, and with one, {TOKENS} tokens a choice",
        "model": Path(path).name,
        "threads": args.threads,
        "n": args.n,
        "rounds": args.rounds,
        "prompt_tokens": {side: sorted(t) for side, t in prompt_tokens.items()},
        "median_s": {side: {kind: round(statistics.median(v), 3) for kind, v in by_kind.items()} for side, by_kind in seconds.items()},
        "seconds": {side: {kind: [round(x, 3) for x in v] for kind, v in by_kind.items()} for side, by_kind in seconds.items()},
        "n_over_one": {side: paired(by_kind["n"], by_kind["one"]) for side, by_kind in seconds.items()},
        "lokal_cache_folder_bytes": left,
    }
    if "peer" in servers:
        report["peer"] = servers["peer"].version()
        report["lokal_over_peer"] = {kind: paired(seconds["lokal"][kind], seconds["peer"][kind]) for kind in ("one", "n")}
    publish(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
