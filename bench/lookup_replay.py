"""Prompt lookup's choices replayed on recorded greedy replies, priced by a measured pass-cost curve: Lokal against the peer's rules.

Greedy speculative decoding emits the same reply as plain decoding (up to batched
logits' rounding), so which drafts a policy makes, and how many of their tokens
hold, follow from the reply alone; only their price needs the machine. This
script records the plain greedy replies of bench/speculative.py's prompts once
(Qwen2.5-Coder-1.5B Q4_K_M; `--replies` caches them), then replays each reply
token by token through

  - Lokal's own drafting (runtime/speculative/decoder.py's Drafting with its
    Controller and NgramIndex, as the runtime runs them, the cost model fed the
    curve's passes as they happen), and
  - the peer's two n-gram rules as llama.cpp's common/speculative.cpp and
    common/ngram-map.cpp write them: ngram-mod (a 24-token hashed match, drafts of
    48 to 64, the reply's n-grams pooled every 32 tokens) and ngram-simple (a
    12-token match, its last occurrence, up to 48 tokens),

pricing every pass by a curve of what a target pass over n tokens costs in plain
steps (bench/verify_costs.py's `target_pass_in_steps`, measured on this machine
per thread count). The figure per policy is tokens per step of cost: plain
decoding is 1.0.

This is a model of the runtime, not a measurement of it: it has no noise, no
scheduler and no batching, and it takes the curve as exact. It says why a policy
wins or loses on a prompt (which drafts, after which matches, at what price) in
seconds; bench/speculative.py --peer measures whether it does.

By default the cost model starts as a load's first reply finds it (single steps,
the smallest verification, the prompt's chunks); `--warm` starts it with every
size of the curve timed, as a load's later replies find it (bench/speculative.py
runs all its prompts in one load). `--as-run RUN.json`, with `--costs` that run's
trace, starts each prompt from the prices the runtime had when it began the
prompt's first `auto` reply (the trace's `begin` events): the runtime learns its
prices from the prompts before, on a noisy machine, and which draft lengths it
chose follows from them (js-modern, two threads: the run's 16-token draft that
kept nothing came back only so). It replays the first reply only: the run's later
rounds of a prompt go on learning from the earlier ones (the same conversation),
and its drafted and kept counts are theirs.

    .venv/bin/python bench/lookup_replay.py [--costs docs/benchmarks/verify_costs_threads_1.json] [--kinds code-edit]
                                            [--replies bench/out/replies.json] [--trace NAME] [--warm]
    .venv/bin/python bench/lookup_replay.py --costs TRACE.jsonl --as-run RUN.json   (bench/speculative.py --trace TRACE.jsonl --json RUN.json)
"""

from __future__ import annotations

import argparse
import bisect
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from copy_runs import GREEDY, N_CTX, greedy_replies, load_target  # noqa: E402
from report import publish  # noqa: E402

from runtime.llama.generation import BatchSoFar  # noqa: E402
from runtime.speculative.adaptive import Controller, filler_rows  # noqa: E402
from runtime.speculative.costs import SETTLED_AFTER, SMALLEST_VERIFICATION, CostModel  # noqa: E402
from runtime.speculative.decoder import Drafting  # noqa: E402
from runtime.speculative.lookup import NgramIndex  # noqa: E402
from price_errors import steps_around  # noqa: E402

PEER_MOD_MATCH, PEER_MOD_MIN, PEER_MOD_MAX, PEER_MOD_CHUNK = 24, 48, 64, 32
PEER_SIMPLE_MATCH, PEER_SIMPLE_MAX = 12, 48


def record_replies(kinds: list[str], tokens: int, threads: int) -> dict:
    model = load_target(threads)
    try:
        replies: dict[str, Any] = {"model": Path(model.settings.path).name, "tokens": tokens, "ends": sorted(t for t in range(model.n_vocab) if model.is_end_of_generation(t)), "prompts": []}
        for kind, name, prompt, reply in greedy_replies(model, kinds, tokens):
            replies["prompts"].append({"kind": kind, "name": name, "prompt": prompt, "reply": reply})
    finally:
        model.close()
    return replies


class Curve:
    """What a target pass over n tokens costs, in plain steps: the measured sizes, linear between them."""

    def __init__(self, steps_by_size: dict[str, float]):
        self.sizes = sorted(int(n) for n in steps_by_size)
        self.steps = [steps_by_size[str(n)] for n in self.sizes]

    def __call__(self, n: int) -> float:
        if n <= self.sizes[0]:
            return self.steps[0]
        if n >= self.sizes[-1]:  # past the largest size measured: its cost per extra token
            last, steps = self.sizes[-1], self.steps[-1]
            return steps + (n - last) * (steps - 1.0) / (last - 1)
        i = bisect.bisect_right(self.sizes, n)
        n0, n1, s0, s1 = self.sizes[i - 1], self.sizes[i], self.steps[i - 1], self.steps[i]
        return s0 + (s1 - s0) * (n - n0) / (n1 - n0)


def curve_from_trace(path: Path) -> dict[str, float]:
    """What a target pass of each size cost in a `speculative.py --trace` run, in plain steps of its moment (price_errors.py's
    steps around it): the median per size. The passes the runtime really ran, where verify_costs.py times each size
    alone, a few times, in one moment (on the 2026-12-04 one-thread curve a 41-token pass costs 28.3 steps; in the traced
    one-thread code-edit run of 1c9dc96's runtime, 23.6)."""
    passes = [line for line in _trace_lines(path) if line.get("event") in ("pass", "begin")]
    by_size: dict[int, list[float]] = {}
    for i, line in enumerate(passes):
        n = line.get("batch_tokens", 0) if line["event"] == "pass" else 0
        if n >= 2 and line.get("decode_s"):
            step = steps_around(passes, i)
            if step:
                by_size.setdefault(n, []).append(line["decode_s"] / step)
    if not by_size:
        raise SystemExit(f"{path}: no pass of two or more tokens with plain steps around it; make one with bench/speculative.py --trace FILE")
    return {"1": 1.0} | {str(n): round(statistics.median(by_size[n]), 3) for n in sorted(by_size)}


def _trace_lines(path: Path) -> list[dict]:
    """The JSON objects of a trace file, one a line; a file that cannot be read, or a line that is not one, is refused."""
    try:
        text = path.read_text()
    except OSError as error:
        raise SystemExit(f"{path}: cannot be read ({error.strerror}); make a trace with bench/speculative.py --trace FILE") from None
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            line = None
        if not isinstance(line, dict):
            raise SystemExit(f"{path}:{number}: not a JSON object; a trace has one per line (bench/speculative.py --trace FILE)")
        lines.append(line)
    return lines


def prices_as_run(trace: Path, run: Path) -> dict[str, dict[str, list[float]]]:
    """Each prompt of a bench/speculative.py run: the band prices ({band: [median size, slope]}) of the `begin` event
    of its first `auto` reply in the run's trace. The run asks its prompts in order, each `rounds` times."""
    try:
        report = json.loads(run.read_text())
        names, rounds = [p["name"] for p in report["prompts"]], int(report["rounds"])
    except (OSError, ValueError, KeyError, TypeError):
        raise SystemExit(f"{run}: not a bench/speculative.py --json report (prompts, rounds)") from None
    begins = [line for line in _trace_lines(trace) if line.get("event") == "begin" and line.get("mode") == "auto"]
    if len(begins) != len(names) * rounds:
        raise SystemExit(
            f"{trace}: {len(begins)} `auto` replies began, and {run} asked {len(names)} prompts {rounds} times each: "
            "give the trace and the JSON of one bench/speculative.py run"
        )
    return {name: begins[i * rounds].get("slopes", {}) for i, name in enumerate(names)}


def priced_as(slopes: dict[str, list[float]]) -> CostModel:
    """A cost model holding these band prices, each settled, in steps of a plain step of 1."""
    costs = CostModel()
    costs.observe_pass(1, 1.0)
    for size, slope in slopes.values():
        n = round(size)
        for _ in range(SETTLED_AFTER):
            costs.observe_pass(n, 1.0 + slope * (n - 1))
    return costs


def common_run(draft: list[int], reply: list[int], at: int) -> int:
    held = 0
    while held < len(draft) and at + held < len(reply) and draft[held] == reply[at + held]:
        held += 1
    return held


def replay(reply: list[int], propose, on_step=None) -> dict:
    """Step through `reply`: `propose(pos)` gives the draft at reply position pos (the pending token being reply[pos - 1]).

    Returns the passes (by size) and the drafted and kept tokens; `on_step(pos, draft, kept)` is told each step.
    """
    passes: list[int] = []
    drafted = kept = 0
    pos = 1  # the first token comes from the prompt's pass
    while pos < len(reply):
        draft = propose(pos)
        held = common_run(draft, reply, pos) if draft else 0
        passes.append(1 + len(draft) + (filler_rows(1 + len(draft)) if draft else 0))  # filled to a tile as the runtime does
        drafted += len(draft)
        kept += held
        if on_step is not None:
            on_step(pos, draft, held)
        pos += held + 1
    return {"passes": passes, "drafted": drafted, "kept": kept}


def _as_loaded(prompt: list[int], curve: Curve, warm: bool) -> CostModel:
    """The cost model as a reply of a load finds it, priced by the curve (a run's prices, priced_as, were taken as
    its reply began: its prompt is already in them)."""
    costs = CostModel()
    if warm:  # as after earlier replies of the same load: every size of the curve timed
        for n in curve.sizes:
            for _ in range(SETTLED_AFTER):
                costs.observe_pass(n, curve(n))
    # What the runtime has measured when the reply starts: single steps, calibration's 2-token pass (its larger
    # one depends on the machine's speed, and is left out), and the prompt's chunks, priced as passes of their size.
    for _ in range(9):
        costs.observe_pass(1, 1.0)
    costs.observe_pass(SMALLEST_VERIFICATION, curve(SMALLEST_VERIFICATION))
    for i in range(0, len(prompt), 512):
        n = min(512, len(prompt) - i)
        costs.observe_pass(n, curve(n))
    return costs


def lokal(
    prompt: list[int], reply: list[int], curve: Curve, ends: set[int], trace: list | None, warm: bool = False, prices: dict | None = None
) -> dict:
    """`prices`: start from these band prices (prices_as_run), as the runtime did, rather than from the curve."""
    costs = priced_as(prices) if prices is not None else _as_loaded(prompt, curve, warm)
    controller = Controller(costs)
    lookup = NgramIndex(ends=lambda t: t in ends)
    drafting = Drafting(controller, lookup, None)
    history = list(prompt) + reply[:1]
    drafting.reply_start = len(prompt)
    controller.begin_reply(history)
    lookup.reset(history)
    state: dict = {}

    def propose(pos: int) -> list[int]:
        room = min(N_CTX - len(history) - 1, len(reply) - pos)
        draft = drafting.propose(history, room, GREEDY, None, BatchSoFar())
        state["draft"] = draft
        return draft.tokens if draft else []

    def on_step(pos: int, tokens: list[int], held: int) -> None:
        draft = state["draft"]
        emitted = reply[pos : pos + held + 1]
        costs.observe_pass(1 + len(tokens), curve(1 + len(tokens)))
        if draft is not None:
            drafting.judged(draft.match, draft.start, len(tokens), held, draft.of_reply, draft.resumes, emitted[-1], draft.substituted, draft.carried)
            if trace is not None:
                trace.append({"at": pos, "start": draft.start, "match": draft.match, "of_reply": draft.of_reply, "drafted": len(tokens), "kept": held})
        drafting.score_shadow(emitted)
        history.extend(emitted)
        lookup.extend(emitted)

    return replay(reply, propose, on_step)


def peer_mod(prompt: list[int], reply: list[int]) -> dict:
    pool: dict[tuple[int, ...], int] = {}
    n = PEER_MOD_MATCH
    history = list(prompt)
    for i in range(len(history) - n):
        pool[tuple(history[i : i + n])] = history[i + n]
    added = len(history) - n

    def propose(pos: int) -> list[int]:
        nonlocal added
        tokens = history + reply[:pos]
        if added + PEER_MOD_CHUNK < len(tokens):
            for i in range(added, len(tokens) - n):
                pool[tuple(tokens[i : i + n])] = tokens[i + n]
            added = len(tokens) - n
        window = tokens[-n:]
        draft: list[int] = []
        for _ in range(PEER_MOD_MAX):
            token = pool.get(tuple(window))
            if token is None:
                return draft if len(draft) >= PEER_MOD_MIN else []
            draft.append(token)
            window = window[1:] + [token]
        return draft

    return replay(reply, propose)


def peer_simple(prompt: list[int], reply: list[int]) -> dict:
    n = PEER_SIMPLE_MATCH

    def propose(pos: int) -> list[int]:
        tokens = prompt + reply[:pos]
        if len(tokens) <= n + PEER_SIMPLE_MAX + 1:
            return []
        pattern = tokens[-n:]
        for j in range(len(tokens) - n - 1, 0, -1):
            if tokens[j : j + n] == pattern:
                return tokens[j + n : j + n + min(PEER_SIMPLE_MAX, len(tokens) - (j + n))]
        return []

    return replay(reply, propose)


def summary(result: dict, tokens: int, curve: Curve) -> dict:
    cost = 1.0 + sum(curve(n) for n in result["passes"])  # the prompt's last pass gives the first token: one step
    return {
        "tokens_per_step": round(tokens / cost, 3),
        "drafted": result["drafted"],
        "kept": result["kept"],
        "passes": len(result["passes"]),
        "steps": round(cost, 1),
    }


def drafting_constant(setting: str) -> tuple[object, str, float]:
    """`MODULE.NAME=VALUE` as (runtime.speculative's module, the name, the value as a number); ValueError says what is wrong.

    Only numbers the module already defines at its top level (MATCH_FACTOR, PRIOR_TOKENS, DECAY, ...): the drafting
    reads them when it runs, so setting one before the replay replays the change."""
    import importlib

    target, sep, text = setting.partition("=")
    module_name, dot, name = target.rpartition(".")
    if not sep or not dot:
        raise ValueError(f"{setting!r} is not MODULE.NAME=VALUE")
    try:
        module = importlib.import_module(f"runtime.speculative.{module_name}")
    except ImportError:
        raise ValueError(f"runtime.speculative has no module {module_name!r}") from None
    current = getattr(module, name, None)
    if not name.isupper() or isinstance(current, bool) or not isinstance(current, (int, float)):
        raise ValueError(f"{module_name}.{name} is not a number the module defines")
    try:
        value = type(current)(text)
    except ValueError:
        kind = "a whole number" if isinstance(current, int) else "a number"
        raise ValueError(f"{text!r} is not {kind}, as {module_name}.{name} is") from None
    return module, name, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--costs",
        type=Path,
        default=Path("docs/benchmarks/verify_costs_threads_1.json"),
        help="bench/verify_costs.py's JSON, or a bench/speculative.py --trace file (.jsonl): what its passes cost in steps of their moment",
    )
    parser.add_argument("--replies", type=Path, default=Path("bench/out/replies.json"), help="recorded replies (made, then reused)")
    parser.add_argument("--kinds", default="code-edit")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2, help="for recording the replies")
    parser.add_argument("--trace", help="also list Lokal's drafts on this prompt")
    parser.add_argument("--warm", action="store_true", help="price drafts as the later replies of a load do: every pass size already timed")
    parser.add_argument(
        "--as-run", type=Path, metavar="RUN.json",
        help="with --costs TRACE.jsonl of the same bench/speculative.py run: each prompt starts from the prices the runtime had then",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="MODULE.NAME=VALUE",
        help="replay with one of the drafting's numbers changed (adaptive.MATCH_FACTOR=3, copy_runs.PRIOR_TOKENS=2, ...): what the change would do, in the model, before a live run",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    try:
        for setting in args.set:
            module, name, value = drafting_constant(setting)
            setattr(module, name, value)
    except ValueError as exc:
        parser.error(f"--set: {exc}")
    if args.as_run is not None and args.costs.suffix != ".jsonl":
        parser.error("--as-run needs --costs to be that run's trace (.jsonl)")
    if args.as_run is not None and args.warm:
        parser.error("--as-run starts each prompt from the run's prices; --warm from the curve's: give one")
    kinds = args.kinds.split(",")
    recorded = json.loads(args.replies.read_text()) if args.replies.exists() else None
    if recorded is None or recorded["tokens"] != args.tokens or not {p["kind"] for p in recorded["prompts"]} >= set(kinds):
        recorded = record_replies(sorted(set(kinds) | {p["kind"] for p in (recorded or {}).get("prompts", [])}), args.tokens, args.threads)
        args.replies.parent.mkdir(parents=True, exist_ok=True)
        args.replies.write_text(json.dumps(recorded))
    from_trace = args.costs.suffix == ".jsonl"
    curve_source: dict[str, Any] = {"threads": None, "target_pass_in_steps": curve_from_trace(args.costs)} if from_trace else json.loads(args.costs.read_text())
    curve = Curve(curve_source["target_pass_in_steps"])
    ends = set(recorded["ends"])
    as_run = prices_as_run(args.costs, args.as_run) if args.as_run is not None else None
    report: dict = {"costs": str(args.costs), "threads": curve_source["threads"], "warm": args.warm, "model": recorded["model"], "prompts": []}
    if args.set:
        report["set"] = args.set
    if as_run is not None:
        report["as_run"] = str(args.as_run)
    if from_trace:
        report["target_pass_in_steps"] = curve_source["target_pass_in_steps"]  # the trace stays out of the report: its curve
    ratios = []
    for item in recorded["prompts"]:
        if item["kind"] not in kinds:
            continue
        prompt, reply = item["prompt"], item["reply"]
        if as_run is not None and item["name"] not in as_run:
            raise SystemExit(f"{args.as_run}: the run did not ask {item['name']}; pick its prompts with --kinds, or give a run that asked them")
        prices = as_run[item["name"]] if as_run is not None else None
        trace: list | None = [] if args.trace == item["name"] else None
        row = {
            "name": item["name"],
            "tokens": len(reply),
            "lokal": summary(lokal(prompt, reply, curve, ends, trace, args.warm, prices), len(reply), curve),
            "peer_ngram_mod": summary(peer_mod(prompt, reply), len(reply), curve),
            "peer_ngram_simple": summary(peer_simple(prompt, reply), len(reply), curve),
        }
        best = max(row["peer_ngram_mod"]["tokens_per_step"], row["peer_ngram_simple"]["tokens_per_step"])
        row["lokal_over_peer_best"] = round(row["lokal"]["tokens_per_step"] / best, 3)
        ratios.append(row["lokal_over_peer_best"])
        if trace is not None:
            row["trace"] = trace
        report["prompts"].append(row)
    if ratios:
        product = 1.0
        for r in ratios:
            product *= r
        report["geomean_lokal_over_peer_best"] = round(product ** (1 / len(ratios)), 3)
    publish(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
