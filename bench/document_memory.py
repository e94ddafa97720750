"""How much memory the real runtime holds after it has been handed many documents: attachment.add of --docs text
files of --mb megabytes each (a shelf of books), no model loaded, then the runtime process's resident memory.
Runs in any tree (bench/paired.py across trees: --figure rss_after_mb).

    .venv/bin/python bench/document_memory.py [--docs 20] [--mb 2] [--json FILE]
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import tempfile
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from report import publish  # noqa: E402
from runtime.client import RuntimeClient  # noqa: E402
from runtime.protocol import AttachmentAddParams, methods  # noqa: E402


def book(i: int, mb: float) -> bytes:
    line = f"Book {i}: the harbour master kept the tide table, and the ferry ran late when it rained.\n"
    return (line * int(mb * 1_000_000 / len(line))).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20)
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    client = RuntimeClient(env=dict(os.environ, LOKAL_DATA_DIR=tempfile.mkdtemp(prefix="lokal-bench-docmem-")))
    try:
        client.initialize("bench-document-memory")
        runtime = psutil.Process(client.pid)
        before_mb = runtime.memory_info().rss / 1e6
        for i in range(args.docs):
            data = base64.b64encode(book(i, args.mb)).decode()
            client.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name=f"book{i}.txt", data_base64=data), timeout=300)
        after_mb = runtime.memory_info().rss / 1e6
    finally:
        client.close()
    publish({"docs": args.docs, "mb_each": args.mb, "rss_before_mb": round(before_mb, 1), "rss_after_mb": round(after_mb, 1),
             "rss_growth_mb": round(after_mb - before_mb, 1)}, args.json)


if __name__ == "__main__":
    main()
