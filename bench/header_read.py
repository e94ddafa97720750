"""How long reading a GGUF model's header takes (runtime/gguf/reader.py), the tokenizer's vocabulary included.

The window reads headers on a worker thread of its own process while it opens (a load's settings, the draft
models on disk): Python time that holds the GIL, which the event loop then waits on. Median of --reads reads of
each file, after one read not timed.

    .venv/bin/python bench/header_read.py [--reads 9] [FILE.gguf ...]   (default: the starter model and the Qwen2.5-Coder pair, from their wheels)

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import publish  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=9)
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args()
    from runtime.gguf.reader import read_file_header
    from runtime.models import wheels

    files = args.files or [wheels.ensure(model, log=lambda s: print(s, file=sys.stderr)) for model in (wheels.STARTER, wheels.QWEN_CODER_0_5B, wheels.QWEN_CODER_1_5B)]
    report: dict = {"reads": args.reads, "files": {}}
    for path in files:
        header = read_file_header(path)
        times = []
        for _ in range(args.reads):
            started = time.perf_counter()
            read_file_header(path)
            times.append(time.perf_counter() - started)
        report["files"][Path(path).name] = {"vocabulary": header.vocab_size, "median_ms": round(1000 * statistics.median(times), 1)}
    publish(report, args.json)


if __name__ == "__main__":
    main()
