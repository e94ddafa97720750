"""Structured output's pass rate: N requests with a non-trivial JSON schema, every reply checked.

Each request goes through `lokal serve` and the official `openai` client's parse
helper with a pydantic model (nested objects, a list of objects, enums, an
optional field, bounded strings), sampled at temperature 0.8 with its own seed,
so the N replies differ. A reply passes when it finished ("stop") and validates
against the schema, by jsonschema and by the pydantic model. `--speculation on`
serves with speculative decoding (LOKAL_AUTO_SPECULATION=on), so drafted tokens
that do not fit the grammar are refused on the way.

    .venv/bin/python bench/structured_output.py [--requests 50] [--model PATH] [--speculation on|off]

Prints one JSON object; exits 1 unless every reply passed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Literal, Optional

import jsonschema
import pydantic

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from runtime.models import wheels  # noqa: E402
from report import publish

PROMPTS = ["a small museum", "a bakery", "a city library", "a football club", "a train station"]


class Person(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=32)
    role: Literal["owner", "manager", "staff", "volunteer"]
    years: int


class Place(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=40)
    kind: Literal["museum", "shop", "library", "club", "station", "other"]
    city: str = pydantic.Field(max_length=32)
    open_on_sunday: bool
    rating: float
    people: list[Person] = pydantic.Field(min_length=1, max_length=3)
    website: Optional[str] = pydantic.Field(max_length=48)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the starter model)")
    parser.add_argument("--speculation", choices=["on", "off"], default="on")
    parser.add_argument("--n-threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=400)
    args = parser.parse_args()
    from serve_process import Served  # tests/serve_process.py: `lokal serve` as a child on a free loopback port

    model = args.model or str(wheels.ensure(wheels.STARTER, log=lambda s: print(s, file=sys.stderr)))
    served = Served("--n-threads", str(args.n_threads), model=model, n_ctx=2048, env=dict(os.environ, LOKAL_AUTO_SPECULATION=args.speculation))
    schema = Place.model_json_schema()
    results = []
    try:
        served.wait_ready(timeout=600)
        client = served.openai(timeout=600)
        name = Path(model).stem
        for i in range(args.requests):
            started = time.perf_counter()
            reply = client.chat.completions.parse(
                model=name,
                messages=[{"role": "user", "content": f"Describe {PROMPTS[i % len(PROMPTS)]} as JSON: its name, kind, city, whether it opens on Sunday, a rating, up to three people who work there and its website."}],
                response_format=Place,
                max_tokens=args.max_tokens,
                temperature=0.8,
                seed=1000 + i,
            )
            choice = reply.choices[0]
            problem = None
            try:
                jsonschema.validate(json.loads(choice.message.content), schema)
                if choice.finish_reason != "stop" or not isinstance(choice.message.parsed, Place):
                    problem = f"finish_reason {choice.finish_reason}"
            except (ValueError, jsonschema.ValidationError) as exc:
                problem = f"{type(exc).__name__}: {exc}"[:200]
            results.append({"seed": 1000 + i, "ok": problem is None, "problem": problem, "tokens": reply.usage.completion_tokens, "seconds": round(time.perf_counter() - started, 2)})
            print(f"{i + 1}/{args.requests} {'ok' if problem is None else problem}", file=sys.stderr, flush=True)
    finally:
        served.close()
    passed = sum(r["ok"] for r in results)
    report = {
        "model": Path(model).name,
        "speculation": args.speculation,
        "requests": len(results),
        "passed": passed,
        "pass_rate": f"{passed}/{len(results)}",
        "mean_completion_tokens": round(sum(r["tokens"] for r in results) / max(len(results), 1), 1),
        "failures": [r for r in results if not r["ok"]],
    }
    publish(report)
    return 0 if passed == len(results) == args.requests else 1


if __name__ == "__main__":
    raise SystemExit(main())
