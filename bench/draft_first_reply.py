"""The first reply after a load with a draft model that cannot pay here, against the same reply with no draft model loaded.

A draft model's worth is learnt from the costs measured on this machine; a reply
that does not know them yet pays for finding out. With Qwen2.5-Coder-0.5B
beside the 1.5B on a 2-core CPU (a draft step ~0.55 of a target step: it can
never pay), the first reply read its whole prompt into the draft model before
its first token and probed it mid-reply. Each round loads the target twice, in
turn with the draft model and without, and times the first reply (`auto`,
greedy) of a fresh conversation: time to the first token and decode speed,
paired per round (bench/ratios.py).

    .venv/bin/python bench/draft_first_reply.py [--threads 2] [--rounds 3] [--name module-logging] [--tokens 128] [--json out.json]

Prints one JSON object: per round and configuration the figures, and the paired ratios (with the draft over without).
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ratios import paired  # noqa: E402  (bench/ratios.py)
from report import publish  # noqa: E402
from speculative import N_CTX, PROMPTS, SYSTEM  # noqa: E402

from runtime.client import RuntimeClient  # noqa: E402
from runtime.models import wheels  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402


def first_reply(target: str, draft: str | None, threads: int, prompt: str, tokens: int) -> dict:
    env = {**os.environ, "LOKAL_AUTO_SPECULATION": "on"}
    with RuntimeClient(env=env) as client:
        client.initialize("bench-draft-first-reply")
        client.load_model(ModelLoadParams(path=target, n_ctx=N_CTX, n_threads=threads, draft_path=draft), timeout=600)
        messages = [ChatMessage("system", SYSTEM), ChatMessage("user", prompt)]
        # A conversation never seen. The target may still find the prompt in its KV store (earlier runs of the same
        # text), with or without a draft model alike; the draft model has no such store and reads it all.
        result = client.chat(ChatGenerateParams(f"first-{uuid.uuid4().hex}", messages, max_tokens=tokens, temperature=0.0, speculation="auto"), timeout=3600)
    s = result.stats
    return {
        "ttft_ms": round(s.ttft_ms, 1),
        "decode_tokens_per_s": round(s.decode_tokens_per_s, 2),
        "completion_tokens": s.completion_tokens,
        "model_draft_tokens": s.model_draft_tokens,
        "lookup_draft_tokens": s.lookup_draft_tokens,
        "text": result.text,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--name", default="module-logging", help="a prompt of bench/speculative.py")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    target = str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=log))
    draft = str(wheels.ensure(wheels.QWEN_CODER_0_5B, log=log))
    prompt = next(text for _kind, name, text in PROMPTS if name == args.name)
    runs: dict[str, list[dict]] = {"draft": [], "none": []}
    for round_ in range(args.rounds):
        # Alternating which goes first, so a trend on the machine falls on both alike.
        order = ("draft", "none") if round_ % 2 == 0 else ("none", "draft")
        for config in order:
            run = first_reply(target, draft if config == "draft" else None, args.threads, prompt, args.tokens)
            runs[config].append(run)
            log(f"round {round_ + 1} {config:5s} ttft {run['ttft_ms']:8.1f} ms  {run['decode_tokens_per_s']:6.2f} tok/s  drafted by the model {run['model_draft_tokens']}")
    report = {
        "target": Path(target).name,
        "draft": Path(draft).name,
        "threads": args.threads,
        "prompt": args.name,
        "tokens": args.tokens,
        "rounds": args.rounds,
        "runs": {config: [{k: v for k, v in r.items() if k != "text"} for r in rs] for config, rs in runs.items()},
        "same_text": all(a["text"] == b["text"] for a, b in zip(runs["draft"], runs["none"])),
        "ttft_with_draft_over_without": paired([r["ttft_ms"] for r in runs["draft"]], [r["ttft_ms"] for r in runs["none"]]),
        "decode_with_draft_over_without": paired([r["decode_tokens_per_s"] for r in runs["draft"]], [r["decode_tokens_per_s"] for r in runs["none"]]),
    }
    publish(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
