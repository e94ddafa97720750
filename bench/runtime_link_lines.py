"""How long the window's RuntimeLink takes to read one long line from its process.

A stand-in runtime answers `initialize` with a result padded to --mib MiB, written
in 64 KiB pieces (a pipe's usual read size); the figure is the time from start to
sig_ready, the median of --repeats runs. A link that searched the whole buffer for
a newline on every read would take time quadratic in the line's length; one that
searches only the new bytes takes time linear in it, so doubling --mib about
doubles the figure (--mib 16 and 32 show which).

    .venv/bin/python bench/runtime_link_lines.py [--mib 32] [--repeats 3]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer  # noqa: E402

from app.runtime_link import RuntimeLink  # noqa: E402
from report import publish  # noqa: E402

STAND_IN = r"""
import json, os, sys
size = int(sys.argv[1])
request = json.loads(sys.stdin.readline())
result = {"protocol_version": "1.0", "lokal_version": "0", "llama_cpp_version": "0", "backend": "x" * size,
          "devices": [], "capabilities": [], "pid": os.getpid()}
line = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\n"
for start in range(0, len(line), 65536):
    sys.stdout.buffer.write(line[start:start + 65536])
    sys.stdout.buffer.flush()
sys.stdin.read()
"""


def one_run(size: int) -> float:
    link = RuntimeLink([sys.executable, "-c", STAND_IN, str(size)], auto_restart=False)
    loop = QEventLoop()
    link.sig_ready.connect(loop.quit)

    def report_crash(why: str) -> None:
        print(why, file=sys.stderr)
        loop.quit()

    link.sig_crashed.connect(report_crash)
    QTimer.singleShot(600_000, loop.quit)
    start = time.perf_counter()
    link.start()
    loop.exec()
    elapsed = (time.perf_counter() - start) * 1000
    ready = link.info is not None and len(link.info.backend) == size
    link.close()
    link.deleteLater()
    QCoreApplication.processEvents()
    if not ready:
        raise SystemExit("the link did not take the line")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])  # noqa: F841
    size = args.mib * 2**20
    publish({"line_mib": args.mib, "read_ms": round(statistics.median(one_run(size) for _ in range(args.repeats)), 1)})


if __name__ == "__main__":
    main()
