"""An evaluation run's scoring requests against `lokal serve`: their time, and what they leave in the KV store.

lm-evaluation-harness scores a multiple-choice task as one `/v1/completions` request per choice: the
context and the choice as token ids (here: as text), `echo`, `logprobs` 1, `max_tokens` 1. This sends
`--requests` of them (a few contexts, four choices each, every prompt new), one after another, to a
server with its own empty cache folder, then reads how many bytes that folder holds: the KV states
the run left on disk. Prints the seconds, requests per second, and the bytes.

    .venv/bin/python bench/scoring_run.py [--model starter|PATH] [--threads 2] [--requests 40] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from report import publish  # noqa: E402
from runtime.models import wheels  # noqa: E402
from serve_process import Served  # noqa: E402

TEXT = (ROOT / "README.md").read_text(encoding="utf-8")
ENDINGS = [" and that is how it works.", " which nobody expected.", " but only on Tuesdays.", " as the tests show."]


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m", help=f"one of {sorted(wheels.ALL)} or a GGUF path")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    path = args.model
    if path in wheels.ALL:
        path = str(wheels.ensure(wheels.ALL[path], log=lambda s: print(s, file=sys.stderr, flush=True)))

    with tempfile.TemporaryDirectory(prefix="lokal-scoring-") as cache:
        env = dict(os.environ, LOKAL_CACHE_DIR=cache)
        served = Served("--model", path, "--n-threads", str(args.threads), "--flash-attn", "on", n_ctx=2048, env=env)
        try:
            client = served.openai()
            model = client.models.list().data[0].id
            started = time.perf_counter()
            for i in range(args.requests):
                context = TEXT[i // 4 * 700 : i // 4 * 700 + 700]  # about 180 tokens, a new context every four requests
                reply = client.completions.create(model=model, prompt=context + ENDINGS[i % 4], max_tokens=1, echo=True, logprobs=1, temperature=0)
                assert len(reply.choices[0].logprobs.tokens) > 100  # the prompt scored
            seconds = time.perf_counter() - started
        finally:
            served.close()
        left = folder_bytes(Path(cache))
    report: dict[str, Any] = {
        "what": "scoring requests (echo, logprobs 1, max_tokens 1) one after another: their time, and the bytes the server's cache folder holds after",
        "model": Path(path).name,
        "threads": args.threads,
        "requests": args.requests,
        "seconds": round(seconds, 3),
        "requests_per_s": round(args.requests / seconds, 3),
        "cache_folder_bytes": left,
    }
    publish(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
