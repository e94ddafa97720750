"""Gives each Python thread its name at the OS level (Linux, 15 bytes), so that /proc/<pid>/task/*/comm, top -H
and bench/api_work.py tell a runtime's threads apart (Python 3.11 leaves them all "python"). Benchmarks put
this folder on the PYTHONPATH of the processes they start; nothing in app/ or runtime/ imports it.

`Thread-3 (_run_job)` is named after its target (`_run_job`); llama.cpp's own threads keep the name of the
thread that started them (the engine's).
"""

from __future__ import annotations

import ctypes
import sys
import threading

PR_SET_NAME = 15


def _os_name(name: str) -> bytes:
    if "(" in name:
        name = name[name.index("(") + 1 :].rstrip(")")
    return name.encode("utf-8", "replace")[:15]


if sys.platform.startswith("linux"):
    _libc = ctypes.CDLL(None, use_errno=True)
    _bootstrap_inner = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def _named_bootstrap_inner(self: threading.Thread) -> None:
        _libc.prctl(PR_SET_NAME, _os_name(self.name), 0, 0, 0)
        _bootstrap_inner(self)

    threading.Thread._bootstrap_inner = _named_bootstrap_inner  # type: ignore[attr-defined]
