"""How long the runtime process takes from its start to its answer to `initialize`, and its memory then: what every
window start, and every restart after a crash, waits for before a model can load. Runs in any tree (bench/paired.py
across trees).

    .venv/bin/python bench/runtime_start.py [--starts 8]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runtime.client import RuntimeClient  # noqa: E402


def one_start() -> tuple[float, float]:
    """(milliseconds from spawning the process to initialize's answer, the process's resident MB then)."""
    started = time.perf_counter()
    client = RuntimeClient()
    try:
        client.initialize("bench")
        ready_ms = (time.perf_counter() - started) * 1000
        return ready_ms, client.metrics().rss_bytes / 2**20
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=8)
    args = parser.parse_args()
    one_start()  # the first start reads the files from disk; the rest find them in the page cache, as a user's next start does
    runs = [one_start() for _ in range(args.starts)]
    print(json.dumps({"starts": args.starts, "initialize_ms": statistics.median(r[0] for r in runs), "rss_mb": statistics.median(r[1] for r in runs),
                      "initialize_ms_each": [round(r[0], 1) for r in runs], "rss_mb_each": [round(r[1], 1) for r in runs]}, indent=2))


if __name__ == "__main__":
    main()
