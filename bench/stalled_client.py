"""Two API streams against `lokal serve`, one client paused: does the other stream slow down? (issue #29)

The measured stream counts on for --tokens tokens (greedy); its decode speed is
taken from the client's side, from its first text chunk to its last. It runs:
- alone;
- beside a second stream whose client reads (the cost of sharing the batch);
- beside a second stream whose client stops reading after its first bytes: a raw
  socket with a small receive buffer that is never read again, so the server's
  writes to it back up within a few kilobytes.
A paused client must cost no more than a reading one (runtime/output_writer.py and
the API's own queues keep the engine thread from ever waiting on a client).
Each figure is the median of --rounds; on a machine shared with other work expect a wide spread.

    .venv/bin/python bench/stalled_client.py [--tokens 200] [--rounds 3] [--model PATH] [--n-threads N] [--speculation]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

COUNTING = "1, 2, 3, 4, 5,"  # the starter model counts on for as long as it is let


def measured_stream(api, name: str, tokens: int) -> dict:
    """One streaming completion: its decode speed as its client sees it, the tokens after the first over the
    time from the first text to the last (the API's usage figure counts the tokens)."""
    stamps, completion_tokens = [], 0
    stream = api.completions.create(model=name, prompt=COUNTING, max_tokens=tokens, temperature=0.0, seed=5, stream=True, stream_options={"include_usage": True})
    for chunk in stream:
        if chunk.choices and chunk.choices[0].text:
            stamps.append(time.perf_counter())
        if chunk.usage is not None:
            completion_tokens = chunk.usage.completion_tokens
    seconds = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    return {"tokens": completion_tokens, "tok_s": (completion_tokens - 1) / seconds if seconds > 0 else 0.0}


class PausedClient:
    """A streaming request whose client reads the first bytes of the answer and then never reads again."""

    def __init__(self, port: int, key: str, name: str, tokens: int):
        body = json.dumps({"model": name, "prompt": COUNTING, "max_tokens": tokens, "temperature": 0.0, "seed": 7, "stream": True}).encode()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: the window stays small
        self.sock.connect(("127.0.0.1", port))
        head = f"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        self.sock.sendall(head.encode() + body)
        self.first = self.sock.recv(256)  # the reply has started streaming; from here on, nothing is read

    def close(self) -> None:
        self.sock.close()


class ReadingClient:
    def __init__(self, api, name: str, tokens: int):
        self.thread = threading.Thread(target=lambda: list(api.completions.create(model=name, prompt=COUNTING, max_tokens=tokens, temperature=0.0, seed=7, stream=True)), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.thread.join(600)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the starter model)")
    parser.add_argument("--n-threads", type=int, default=2)
    parser.add_argument("--speculation", action="store_true", help="leave speculative decoding on (its bursts make the figures noisier)")
    args = parser.parse_args()
    from runtime.models import wheels
    from serve_process import Served  # tests/serve_process.py: `lokal serve` as a child on a free loopback port

    model_path = args.model or str(wheels.ensure(wheels.STARTER))
    os.environ.setdefault("LOKAL_CONFIG_DIR", tempfile.mkdtemp(prefix="lokal-bench-"))  # its own API key, not the user's
    env = {**os.environ, **({} if args.speculation else {"LOKAL_AUTO_SPECULATION": "off"})}
    served = Served("--n-threads", str(args.n_threads), "--parallel", "2", model=model_path, n_ctx=args.n_ctx, env=env)
    try:
        served.wait_ready(600)
        api = served.openai(timeout=600)
        name = api.models.list().data[0].id
        measured_stream(api, name, args.tokens)  # warm-up, not counted: the first streams after a load run slower
        # The other stream outlasts the measured one: it asks for several times as many tokens.
        other_tokens = min(args.tokens * 4, args.n_ctx - 16)
        runs: dict[str, list[dict]] = {"alone": [], "beside_a_reading_client": [], "beside_a_paused_client": []}
        for _ in range(args.rounds):
            runs["alone"].append(measured_stream(api, name, args.tokens))
            reading = ReadingClient(api, name, other_tokens)
            runs["beside_a_reading_client"].append(measured_stream(api, name, args.tokens))
            reading.close()
            paused = PausedClient(served.port, served.key, name, other_tokens)
            runs["beside_a_paused_client"].append(measured_stream(api, name, args.tokens))
            paused.close()  # the client hangs up: the server stops its reply
        report: dict = {"model": Path(model_path).name, "tokens": args.tokens, "rounds": args.rounds, "n_threads": args.n_threads, "speculation": args.speculation}
        for label, results in runs.items():
            report[f"tok_s_{label}"] = round(statistics.median(r["tok_s"] for r in results), 1)
        report["ratio_paused_to_reading"] = round(report["tok_s_beside_a_paused_client"] / report["tok_s_beside_a_reading_client"], 3)
        report["ratio_paused_to_alone"] = round(report["tok_s_beside_a_paused_client"] / report["tok_s_alone"], 3)
        print(json.dumps(report, indent=2))
    finally:
        served.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
