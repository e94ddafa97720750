"""A per-pass trace of speculative replies: where a slow reply's time went (bench/speculative.py --trace).

Off unless LOKAL_SPECULATIVE_TRACE names a file, read at model load. Each reply then appends one
JSON line when it begins and one per target pass: which drafter drafted how many tokens and how
many held, the seconds inside llama_decode, and the seconds of the step outside it (drafting,
planning, judging, and whatever else the engine thread did between two passes).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

TRACE_ENV = "LOKAL_SPECULATIVE_TRACE"

log = logging.getLogger("lokal.speculative")


class PassTrace:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()  # replies of several sequences may share the file

        self.failed = False

    def write(self, **fields) -> None:
        if self.failed:
            return
        line = json.dumps({"t": round(time.perf_counter(), 6), **fields})
        try:
            with self._lock, self.path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
        except OSError as error:
            # A trace is a benchmark's aid: a path it cannot write costs the trace, never the reply.
            self.failed = True
            log.warning("the speculative trace stops: %s cannot be written (%s)", self.path, error)


def trace_from_environment() -> PassTrace | None:
    chosen = os.environ.get(TRACE_ENV, "").strip()
    return PassTrace(Path(chosen)) if chosen else None
