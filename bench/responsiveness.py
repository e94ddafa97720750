"""How long the window's GUI thread goes without its event loop: the product's 50 ms target, measured.

tests/app/ui/test_responsiveness.py drives the real window over the real runtime and the starter model
through start, a model load, a streaming reply, and opening, sending to and paging a 100,000-turn
conversation; the tests there only assert that nothing blocks (200 ms). This runs them --runs times,
each in a fresh pytest process, collects the stalls they write to $LOKAL_STALL_FIGURES, and reports for
each phase the median and the worst of the GUI thread's own stall (wall-clock gap less run-queue wait)
and of the wall-clock gap, against the 50 ms target.

    .venv/bin/python bench/responsiveness.py [--runs 5] [--out FILE.json] [--keep-going]

With --keep-going a run whose test failed (a stall over the tests' bound, which is what a tree before a fix
shows) still counts: the tests write their figures before they assert; the report says how many runs failed.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import publish  # noqa: E402

TARGET_MS = 50.0
TESTS = "tests/app/ui/test_responsiveness.py"


def run_once(figures: Path, keep_going: bool) -> bool:
    """One pytest run of the tests; whether it passed."""
    env = {**os.environ, "LOKAL_STALL_FIGURES": str(figures), "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TESTS], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0 and not keep_going:
        sys.exit(f"{TESTS} failed:\n{done.stdout[-3000:]}")
    return done.returncode == 0


def summary(rows: list[dict]) -> dict:
    phases: dict[str, dict] = {}
    for key in sorted({k for row in rows for k in row if k.endswith("_ms")}):
        values = [row[key] for row in rows if key in row]
        phases[key] = {"median": round(statistics.median(values), 1), "worst": round(max(values), 1), "runs": len(values)}
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--keep-going", action="store_true", help="count the figures of a run whose test failed (and say how many did)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = Path(tmp) / "stalls.jsonl"
        failed = sum(not run_once(figures, args.keep_going) for _ in range(args.runs))
        rows = [json.loads(line) for line in figures.read_text().splitlines()] if figures.exists() else []
    report = {"target_ms": TARGET_MS, "runs": args.runs, "failed_runs": failed, "cpus": os.cpu_count()}
    for test in sorted({row["test"] for row in rows}):
        phases = summary([row for row in rows if row["test"] == test])
        own = {k: v for k, v in phases.items() if not k.endswith("_wall_ms")}
        report[test] = {**phases, "own_median_under_target": all(v["median"] < TARGET_MS for v in own.values())}
    publish(report, args.out)


if __name__ == "__main__":
    main()
