"""Conversations resting beside the one that decodes, through the runtime: its decode speed, and the switch back.

Three conversations of about --warm tokens each rest in seats 1 to 3 (n_seq 4, the
default) while a fourth decodes --tokens tokens plainly, --decodes times (regenerated:
its prompt stays cached); then each resting conversation is asked its next turn, and
decodes --tokens tokens with the others resting beside it.

- store on (the default): the resting seats give up their cells to the KV store while the
  fourth decodes (runtime/scheduler/scheduler.py, `_release_resting`), and each switch back
  restores its conversation from the store.
- store off (LOKAL_KV_STORE=off): nothing could bring them back, so they keep their cells,
  as every resting seat did before; the fourth decodes beside them, a switch back reuses them.
- the peer (--peer: llama-server --parallel 1): the fourth conversation's turn alone.

Both runtimes and the peer are up at once and take turns, alternating which goes first, so a
busy moment of the shared machine falls on all alike; the ratios are paired turn by turn
(bench/ratios.py).

    .venv/bin/python bench/switch_back.py --peer /work/peer/build/bin/llama-server [--threads 1 2] [--warm 2000] [--tokens 128] [--decodes 6]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peer import LlamaServer, exit_on_sigterm, wait_until_idle  # noqa: E402
from ratios import paired  # noqa: E402
from report import publish  # noqa: E402
from runtime.client import RuntimeClient  # noqa: E402
from runtime.models import wheels  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, KvStoreInfoParams, ModelLoadParams, methods  # noqa: E402

SEATS = 4
SYSTEM = "You are a senior Python engineer. Answer briefly."
DECODING = [ChatMessage("system", SYSTEM), ChatMessage("user", "Write a short story about a lighthouse keeper who finds a message in a bottle.")]
NEXT_TURN = "Now write the first function of that code again with type hints. Output only the code."
CHARS_PER_TOKEN = 3.7  # of this repository's Python source in Qwen2.5's tokens, about (the JSON gives the real counts)


def resting_conversations(warm: int) -> list[list[ChatMessage]]:
    source = "".join(Path(f).read_text() for f in sorted(glob.glob(str(ROOT / "runtime" / "**" / "*.py"), recursive=True)))
    size = int(warm * CHARS_PER_TOKEN)
    return [
        [ChatMessage("system", SYSTEM), ChatMessage("user", f"Review this code.\n\n```python\n{source[i * size : (i + 1) * size]}\n```\nWhat does it do? One line.")]
        for i in range(SEATS - 1)
    ]


def chat(client: RuntimeClient, conversation: str, messages: list[ChatMessage], tokens: int):
    return client.chat(ChatGenerateParams(conversation, messages, max_tokens=tokens, temperature=0.0, speculation="off"), timeout=3600)


class Lokal:
    """One runtime process, the KV store on or off, holding the resting conversations."""

    def __init__(self, model: str, threads: int, store: bool, args):
        self.cache = tempfile.TemporaryDirectory(prefix="lokal-switch-back-")
        env = {**os.environ, "LOKAL_CACHE_DIR": self.cache.name, "LOKAL_KV_STORE": "on" if store else "off"}
        self.client = RuntimeClient(env=env)
        self.client.initialize("bench-switch-back")
        self.client.load_model(ModelLoadParams(path=model, n_ctx=args.n_ctx, n_threads=threads, n_seq=SEATS))
        self.tokens = args.tokens
        self.conversations: list[list[ChatMessage]] = []
        self.first: list = []

    def settle(self) -> None:
        """Its saved states written (store on), and every process quiet, before the next timed turn."""
        self.client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=600)
        wait_until_idle()

    def rest(self, conversations: list[list[ChatMessage]]) -> None:
        self.conversations = conversations
        self.first = [chat(self.client, f"resting-{i}", messages, 16) for i, messages in enumerate(conversations)]
        self.settle()

    def decode(self):
        result = chat(self.client, "decoding", DECODING, self.tokens)
        self.settle()
        return result

    def switch_back(self, i: int):
        messages = [*self.conversations[i], ChatMessage("assistant", self.first[i].text), ChatMessage("user", NEXT_TURN)]
        result = chat(self.client, f"resting-{i}", messages, self.tokens)
        self.settle()
        return result

    def close(self) -> None:
        self.client.close()
        self.cache.cleanup()


def peer_decode(server: LlamaServer, tokens: int) -> dict:
    body = {"messages": [{"role": m.role, "content": m.content} for m in DECODING], "max_tokens": tokens, "temperature": 0.0, "stream": False}
    reply = server.chat(body)
    wait_until_idle()
    return {"decode_tokens_per_s": reply["timings"]["predicted_per_second"], "completion_tokens": reply["timings"]["predicted_n"], "text": reply["choices"][0]["message"]["content"]}


def switch_figures(r) -> dict:
    s = r.stats
    return {
        "ttft_ms": round(s.ttft_ms, 1),
        "decode_tokens_per_s": round(s.decode_tokens_per_s, 3),
        "restored": s.prompt_tokens_restored,
        "restore_ms": round(s.kv_restore_ms, 1),
        "source": s.kv_restore_source,
        "reused": s.prompt_tokens_reused,
        "evaluated": s.prompt_tokens_evaluated,
    }


def measure(model: str, threads: int, conversations: list[list[ChatMessage]], args, log) -> dict:
    """Both runtimes and the peer up at once, their turns alternating, so a busy moment of the machine falls on all alike."""
    on = off = None
    try:
        on, off = Lokal(model, threads, True, args), Lokal(model, threads, False, args)
        with LlamaServer(args.peer, "-m", model, "-t", str(threads), "-tb", str(threads), "-c", str(args.n_ctx), "--parallel", "1") as server:
            on.rest(conversations)
            off.rest(conversations)
            decodes: dict[str, list] = {"store_on": [], "store_off": [], "peer": []}
            for d in range(args.decodes):
                for name in (["store_on", "peer", "store_off"] if d % 2 == 0 else ["store_off", "peer", "store_on"]):
                    if name == "peer":
                        run = peer_decode(server, args.tokens)
                        decodes[name].append(run)
                        rate = run["decode_tokens_per_s"]
                    else:
                        result = (on if name == "store_on" else off).decode()
                        decodes[name].append(result)
                        rate = result.stats.decode_tokens_per_s
                    log(f"-t {threads} decode {d} {name:9s} {rate:6.2f} tok/s")
            back: dict[str, list] = {"store_on": [], "store_off": []}
            for i in range(len(conversations)):
                for name in (["store_on", "store_off"] if i % 2 == 0 else ["store_off", "store_on"]):
                    result = (on if name == "store_on" else off).switch_back(i)
                    back[name].append(result)
                    log(f"-t {threads} switch back {i} {name:9s} " + json.dumps(switch_figures(result)))
    finally:
        for runtime in (on, off):
            if runtime is not None:
                runtime.close()
    rates = {name: [r["decode_tokens_per_s"] if name == "peer" else r.stats.decode_tokens_per_s for r in runs] for name, runs in decodes.items()}
    back_rates = {name: [r.stats.decode_tokens_per_s for r in runs] for name, runs in back.items()}
    ttft = {name: [r.stats.ttft_ms for r in runs] for name, runs in back.items()}
    return {
        "threads": threads,
        "resting_prompt_tokens": [r.stats.prompt_tokens for r in on.first],
        "decode_tokens_per_s": {name: [round(x, 3) for x in values] for name, values in rates.items()},
        "decode_tokens_per_s_median": {name: round(statistics.median(values), 3) for name, values in rates.items()},
        "store_on_over_store_off": paired(rates["store_on"], rates["store_off"]),
        "store_on_over_peer": paired(rates["store_on"], rates["peer"]),
        "store_off_over_peer": paired(rates["store_off"], rates["peer"]),
        "same_text": decodes["store_on"][0].text == decodes["store_off"][0].text,
        "same_text_as_peer": decodes["store_on"][0].text == decodes["peer"][0]["text"],
        "completion_tokens": {"lokal": decodes["store_on"][0].stats.completion_tokens, "peer": decodes["peer"][0]["completion_tokens"]},
        # Each resting conversation asked its next turn: restored from the store into a freed cache, or resident among the others.
        "switched_back_decode_tokens_per_s": {name: [round(x, 3) for x in values] for name, values in back_rates.items()},
        "switched_back_store_on_over_store_off": paired(back_rates["store_on"], back_rates["store_off"]),
        "switch_back_ttft_ms": {name: [round(x, 1) for x in values] for name, values in ttft.items()},
        "switch_back_ttft_store_on_over_store_off": paired(ttft["store_on"], ttft["store_off"]),
        "switch_back": {name: [switch_figures(r) for r in runs] for name, runs in back.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", required=True, help="a llama-server binary")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--warm", type=int, default=2000, help="about this many tokens in each of the 3 resting conversations")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--decodes", type=int, default=6, help="decodes of the fourth conversation, each runtime's and the peer's turns alternating")
    parser.add_argument("--n-ctx", type=int, default=4096, help="per sequence")
    parser.add_argument("--model", help="default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    exit_on_sigterm()
    log = lambda s: print(s, file=sys.stderr, flush=True)
    model = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=log))
    conversations = resting_conversations(args.warm)
    report = {"model": Path(model).name, "seats": SEATS, "tokens": args.tokens, "command": " ".join(["bench/switch_back.py", *sys.argv[1:]]), "threads": []}
    started = time.perf_counter()
    for threads in args.threads:
        report["threads"].append(measure(model, threads, conversations, args, log))
    report["seconds"] = round(time.perf_counter() - started)
    publish(report, args.json)


if __name__ == "__main__":
    main()
