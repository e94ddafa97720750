"""The first reply after a load, with the pass costs an earlier load measured here against none: prompt lookup's speed.

A load knows what a target pass of each size costs only once it has paid for one
(runtime/speculative/pass_cost_memory.py): at load it times a step and a 2-token
pass, and larger drafts are tried when nearly sure to hold. The runtime keeps the
pass costs of each model and load settings when it unloads. Each round starts
a fresh runtime twice, in turn blind (its cache folder's kept pass costs removed)
and remembering (its own cache folder, whose costs the earlier loads kept), and
times the first reply of a fresh conversation (`auto`, no draft model, greedy),
paired per round (bench/ratios.py). Before the rounds, one load in the remembering
folder runs a reply to the first prompt, so there is something to remember.

    .venv/bin/python bench/first_reply_costs.py [--threads 1] [--rounds 2] [--names lru-type-hints,scanner-pathlib] [--tokens 256] [--json out.json]

Prints one JSON object: per prompt and configuration the runs, and the paired ratios (remembering over blind).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ratios import geomean, paired  # noqa: E402  (bench/ratios.py)
from report import publish  # noqa: E402
from speculative import N_CTX, PROMPTS, SYSTEM  # noqa: E402

from runtime import paths  # noqa: E402
from runtime.client import RuntimeClient  # noqa: E402
from runtime.models import wheels  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402


def first_reply(cache: Path, target: str, threads: int, prompt: str, tokens: int) -> dict:
    env = {**os.environ, "LOKAL_AUTO_SPECULATION": "on", "LOKAL_CACHE_DIR": str(cache), "LOKAL_MODELS_DIR": str(paths.models_dir())}
    with RuntimeClient(env=env) as client:
        client.initialize("bench-first-reply-costs")
        client.load_model(ModelLoadParams(path=target, n_ctx=N_CTX, n_threads=threads), timeout=600)
        messages = [ChatMessage("system", SYSTEM), ChatMessage("user", prompt)]
        result = client.chat(ChatGenerateParams(f"first-{uuid.uuid4().hex}", messages, max_tokens=tokens, temperature=0.0, speculation="auto"), timeout=3600)
    s = result.stats
    return {
        "decode_tokens_per_s": round(s.decode_tokens_per_s, 2),
        "completion_tokens": s.completion_tokens,
        "draft_tokens": s.draft_tokens,
        "draft_tokens_accepted": s.draft_tokens_accepted,
        "target_passes": s.target_passes,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--names", default="lru-type-hints,scanner-pathlib,js-modern,stats-rename,module-logging", help="prompts of bench/speculative.py")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    target = str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=log))
    texts = {name: text for _kind, name, text in PROMPTS}
    names = args.names.split(",")
    work = Path(tempfile.mkdtemp(prefix="lokal-first-reply-costs-"))
    folders = {"remembering": work / "remembering", "blind": work / "blind"}
    try:
        first_reply(folders["remembering"], target, args.threads, texts[names[0]], args.tokens)  # something to remember
        rows = []
        for name in names:
            runs: dict[str, list[dict]] = {"remembering": [], "blind": []}
            for round_ in range(args.rounds):
                # Alternating which goes first, so a trend on the machine falls on both alike.
                order = ("remembering", "blind") if round_ % 2 == 0 else ("blind", "remembering")
                for config in order:
                    shutil.rmtree(folders["blind"] / "pass_costs", ignore_errors=True)
                    run = first_reply(folders[config], target, args.threads, texts[name], args.tokens)
                    runs[config].append(run)
                    log(f"{name:18s} round {round_ + 1} {config:11s} {run['decode_tokens_per_s']:6.2f} tok/s  drafted {run['draft_tokens']} kept {run['draft_tokens_accepted']}")
            rows.append({
                "name": name,
                "runs": runs,
                "remembering_over_blind": paired([r["decode_tokens_per_s"] for r in runs["remembering"]], [r["decode_tokens_per_s"] for r in runs["blind"]]),
            })
    finally:
        shutil.rmtree(work, ignore_errors=True)
    pooled = [x for row in rows for x in row["remembering_over_blind"]["ratios"]]
    report = {
        "target": Path(target).name,
        "threads": args.threads,
        "tokens": args.tokens,
        "rounds": args.rounds,
        "prompts": rows,
        "remembering_over_blind_by_prompt_geomean": geomean([row["remembering_over_blind"]["geomean"] for row in rows]),
        "remembering_over_blind_pooled": paired(pooled, [1.0] * len(pooled)),
    }
    publish(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
