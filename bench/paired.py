"""Any benchmark here, run on this tree and on an older checkout in turn: paired ratios of chosen figures.

Most benchmarks compare things inside one invocation; this one compares two
versions of Lokal. Each round runs the same benchmark script once in each tree,
alternating which goes first, and reads figures out of the JSON it prints by
dotted path (`next_turn.b_restored_from_disk.ttft_ms`, `prompts.0.modes.auto.decode_tokens_per_s`); a `*`
stands for every element of a list or key of an object (`prompts.*.modes.auto.decode_tokens_per_s`: one figure
per prompt, each named by its own path).
Each round gives one new/old ratio per figure; bench/ratios.py turns them into a
geometric mean with a 95 % interval.

    .venv/bin/python bench/paired.py --baseline /path/to/old/checkout --rounds 3 \\
        --figure openai_api.tokens_per_s_median --figure openai_api.ttft_ms_median \\
        -- bench/api_overhead.py --turns 4

The script runs from each tree's own root with that tree's code, so a benchmark
whose internals changed still measures each version as it was.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from ratios import paired  # noqa: E402


def dig(document: object, path: str | tuple[str, ...]) -> float:
    """The number at a dotted path, or at a path of parts (a key holding a dot, as a file name does)."""
    value = document
    for part in path.split(".") if isinstance(path, str) else path:
        value = value[int(part)] if isinstance(value, list) else value[part]  # type: ignore[index]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SystemExit(f"{path} is {value!r}, not a number")
    return float(value)


def expand(document: object, pattern: str) -> list[tuple[str, ...]]:
    """The paths a pattern names in this document, as parts: itself, or one per element where a part is `*`
    (a key it stands for may hold dots of its own)."""
    paths: list[tuple[str, ...]] = [()]
    for part in pattern.split("."):
        if part != "*":
            paths = [(*p, part) for p in paths]
            continue
        expanded = []
        for prefix in paths:
            value = document
            for step in prefix:
                value = value[int(step)] if isinstance(value, list) else value[step]  # type: ignore[index]
            keys = range(len(value)) if isinstance(value, list) else list(value) if isinstance(value, dict) else None
            if keys is None:
                raise SystemExit(f"{pattern}: {'.'.join(prefix) or 'the document'} is {value!r}, not a list or an object for `*`")
            expanded += [(*prefix, str(key)) for key in keys]
        paths = expanded
    return paths


def last_json_object(stdout: str) -> dict:
    """The benchmark's JSON: the whole output, or else its last line that parses."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        for line in reversed(stdout.splitlines()):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    raise SystemExit("the benchmark printed no JSON object:\n" + stdout[-2000:])


def run_once(tree: Path, script: list[str]) -> tuple[dict, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *script], cwd=tree, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(tree)})
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(script)} failed in {tree} (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return last_json_object(done.stdout), time.perf_counter() - started


def higher_is_better(figure: str, named: list[str]) -> bool:
    """Whether new/old > 1 is a gain for this figure: named so, or a rate (tokens_per_s: a time is the other way)."""
    return figure in named or figure.endswith("_per_s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="an older checkout of this repository")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--figure", action="append", required=True, help="a dotted path into the benchmark's JSON")
    parser.add_argument(
        "--higher-is-better", action="append", default=[], help="figures where new/old > 1 is a gain (default: a rate, *_per_s; else lower is better)"
    )
    parser.add_argument("script", nargs=argparse.REMAINDER, help="-- bench/NAME.py [its arguments]")
    args = parser.parse_args()
    script = args.script[1:] if args.script[:1] == ["--"] else args.script
    if not script:
        parser.error("name the benchmark after --")
    trees = {"new": ROOT, "old": args.baseline.resolve()}
    figures: dict[str, dict[str, list[float]]] = {}
    named: dict[str, tuple[str, tuple[str, ...]]] = {}  # a figure's name -> (the pattern that named it, its path's parts)
    seconds: dict[str, float] = {"new": 0.0, "old": 0.0}
    for round_index in range(args.rounds):
        order = ["new", "old"] if round_index % 2 == 0 else ["old", "new"]
        for side in order:
            document, took = run_once(trees[side], script)
            seconds[side] += took
            if not figures:  # the first run names the figures a `*` stands for; every later run must give each of them
                named = {".".join(parts): (pattern, parts) for pattern in args.figure for parts in expand(document, pattern)}
                figures = {name: {"new": [], "old": []} for name in named}
            for figure in figures:
                figures[figure][side].append(dig(document, named[figure][1]))
    print(json.dumps({
        "benchmark": " ".join(script),
        "baseline": str(trees["old"]),
        "rounds": args.rounds,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "figures": {
            figure: {
                "new": values["new"], "old": values["old"],
                "new_over_old": paired(values["new"], values["old"]),
                "higher_is_better": higher_is_better(figure, args.higher_is_better) or named[figure][0] in args.higher_is_better,
            }
            for figure, values in figures.items()
        },
    }, indent=2))


if __name__ == "__main__":
    main()
