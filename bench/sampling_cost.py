"""What choosing one token costs: the old hand-written numpy sampler against llama.cpp's sampler chain.

Logits rows are real: Qwen2.5-Coder-1.5B (151,936-token vocabulary) writing a
reply (code and free text), and a JSON reply under a JSON grammar for the grammar
settings. Each setting times sample(row) + accept(token) per row, where `token` is
the one the recorded reply went on with, so penalties and the grammar follow a real
reply. Rows and settings are interleaved over rounds, so a busy moment of the
(shared) machine does not favour one of them; the figures are medians, with the 90th
percentile and the maximum per setting, and old/new ratios of the medians. The old
sampler is read from git history (`OLD_COMMIT`), so both run in one process.

    .venv/bin/python bench/sampling_cost.py [--rounds 5] [--tokens 48]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from llama_cpp.llama_grammar import JSON_GBNF  # noqa: E402

from runtime.llama.llama_model import LlamaModel, LoadSettings  # noqa: E402
from runtime.llama.sampling import Sampler, SamplingConfig  # noqa: E402
from runtime.gguf.reader import read_file_header  # noqa: E402
from runtime.models import wheels  # noqa: E402
from report import publish

OLD_COMMIT = "b2ce43e"  # the last commit with the hand-written runtime/engine/sampling.py
PROMPTS = {
    "code": "Write a Python function that merges two sorted lists, with a docstring.",
    "free": "Write the opening paragraph of a short story about a lighthouse keeper.",
    "json": "Describe a fictional city as a JSON object with name, population, founded and districts.",
}
LM_STUDIO = SamplingConfig(temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.1)
# (name, config, rows): the old sampler runs only the settings it had (temperature, top_k, top_p).
SETTINGS = [
    ("greedy", SamplingConfig(temperature=0.0), "text", True),
    ("top_k 40, top_p 0.95 (old default)", SamplingConfig(0.7, 0.95, 40), "text", True),
    ("top_k 0, top_p 0.95", SamplingConfig(0.7, 0.95, 0), "text", True),
    ("top_k 0, top_p 1 (whole vocabulary)", SamplingConfig(0.7, 1.0, 0), "text", True),
    ("top_k 0, top_p 1, min_p 0.05", SamplingConfig(0.7, 1.0, 0, min_p=0.05), "text", False),
    ("LM Studio defaults (min_p 0.05, repeat 1.1)", LM_STUDIO, "text", False),
    ("top_k 0, top_p 1, repeat/frequency/presence penalties", SamplingConfig(0.7, 1.0, 0, repeat_penalty=1.1, frequency_penalty=0.2, presence_penalty=0.2), "text", False),
    ("greedy, repeat 1.1", SamplingConfig(temperature=0.0, repeat_penalty=1.1), "text", False),
    ("LM Studio defaults + DRY 0.8", replace(LM_STUDIO, dry_multiplier=0.8), "text", False),
    ("LM Studio defaults + logit_bias (3 tokens)", replace(LM_STUDIO, logit_bias=((198, -5.0), (13, 2.0), (11, -100.0))), "text", False),
    ("JSON grammar, LM Studio defaults", replace(LM_STUDIO, grammar=JSON_GBNF), "json", False),
    ("JSON grammar, greedy", SamplingConfig(temperature=0.0, grammar=JSON_GBNF), "json", False),
    ("JSON grammar, top_k 0, top_p 1", SamplingConfig(0.7, 1.0, 0, grammar=JSON_GBNF), "json", False),
]


def old_sampler_module():
    source = subprocess.run(["git", "show", f"{OLD_COMMIT}:runtime/engine/sampling.py"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_sampling.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_sampling", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_sampling"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def chat_prompt(model: LlamaModel, text: str) -> list[int]:
    return model.tokenize(f"<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)


def record(model: LlamaModel, prompt: list[int], n: int, grammar: str | None) -> tuple[list[np.ndarray], list[int]]:
    """A greedy reply's logits rows and tokens (under `grammar` if given)."""
    model.clear()
    model.decode(prompt)
    sampler = Sampler(SamplingConfig(temperature=0.0, grammar=grammar), model, prompt)
    rows, tokens = [], []
    for _ in range(n):
        row = np.array(model.logits(-1))
        token = sampler.sample(row)
        if model.is_end_of_generation(token):
            break
        rows.append(row)
        tokens.append(token)
        sampler.accept(token)
        model.decode((token,))
    sampler.close()
    return rows, tokens


def time_reply(make, rows: list[np.ndarray], tokens: list[int]) -> list[float]:
    """Seconds per token: sample(row), then accept the token the reply went on with."""
    sampler = make()
    out = []
    for row, token in zip(rows, tokens):
        started = time.perf_counter()
        sampler.sample(row)
        if hasattr(sampler, "accept"):
            sampler.accept(token)
        out.append(time.perf_counter() - started)
    if hasattr(sampler, "close"):
        sampler.close()
    return out


def summary(seconds: list[float]) -> dict:
    ms = sorted(s * 1000 for s in seconds)
    return {"median_ms": round(statistics.median(ms), 4), "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 4), "max_ms": round(ms[-1], 4), "n": len(ms)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=48, help="tokens recorded per prompt")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    log = lambda s: print(s, file=sys.stderr, flush=True)
    path = str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=log))
    model = LlamaModel(LoadSettings(path, 1024, 0, "f16", "f16", None, args.threads), read_file_header(path))
    old = old_sampler_module()

    replies: dict[str, list[tuple[list[int], list[np.ndarray], list[int]]]] = {"text": [], "json": []}
    for name, text in PROMPTS.items():
        prompt = chat_prompt(model, text)
        rows, tokens = record(model, prompt, args.tokens, JSON_GBNF if name == "json" else None)
        replies["json" if name == "json" else "text"].append((prompt, rows, tokens))
        log(f"recorded {len(rows)} rows for {name}")

    times: dict[str, dict[str, list[float]]] = {name: {"new": [], "old": []} for name, *_ in SETTINGS}
    for round_ in range(args.rounds):
        for name, config, kind, has_old in SETTINGS:
            for prompt, rows, tokens in replies[kind]:
                seeded = replace(config, seed=round_)
                times[name]["new"] += time_reply(lambda: Sampler(seeded, model, prompt), rows, tokens)
                if has_old:
                    times[name]["old"] += time_reply(lambda: old.Sampler(old.SamplingConfig(config.temperature, config.top_p, config.top_k, round_)), rows, tokens)
        log(f"round {round_ + 1}/{args.rounds}")
    model.close()

    results = []
    for name, config, kind, has_old in SETTINGS:
        entry: dict[str, Any] = {"setting": name, "rows": kind, "new": summary(times[name]["new"])}
        if has_old:
            entry["old"] = summary(times[name]["old"])
            entry["old_over_new_median"] = round(entry["old"]["median_ms"] / entry["new"]["median_ms"], 2)
        results.append(entry)
    report = {
        "model": Path(path).name,
        "n_vocab": model.n_vocab,
        "rounds": args.rounds,
        "old_sampler": f"git {OLD_COMMIT}:runtime/engine/sampling.py",
        "per_token": "sample(row) + accept(token), milliseconds",
        "results": results,
        "worst_new_median_ms": max(e["new"]["median_ms"] for e in results),
    }
    publish(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
