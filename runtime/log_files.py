"""Log files a user can find: one rotating log per process kind, and native crash stacks beside it.

A user who double-clicked an installer never sees stderr, so the window and the
runtime each write `<name>.log` in the platform's log folder (runtime.paths.log_dir,
shown in Help ▸ About and opened by Help ▸ Open log folder). stderr keeps getting
what LOKAL_LOG_LEVEL asks for (WARNING by default), as before.

faulthandler writes the Python stack of every thread when the process dies of
a signal (SIGSEGV in Qt or llama.cpp, SIGABRT, ...). It needs a file descriptor
that stays valid until the crash, which a rotating handler's stream is not (it
is closed at each rollover), so the stacks go to `<name>-crash.log` in the same
folder, opened for appending once and kept open. Several runtime processes
(the window's, `lokal serve`, `lokal chat`) may append to runtime.log at once;
every line carries its process id.
"""

from __future__ import annotations

import faulthandler
import logging
import logging.handlers
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from runtime.paths import log_dir

MAX_BYTES = 2 * 1024 * 1024
BACKUPS = 3
FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"

_crash_file: TextIO | None = None  # open until the process ends: faulthandler writes into it on a crash


def start_logging(name: str, stderr_prefix: str) -> Path:
    """Log to `<log dir>/<name>.log` (INFO and up) and to stderr (LOKAL_LOG_LEVEL); returns the log file's path."""
    global _crash_file
    folder = log_dir()
    path = folder / f"{name}.log"
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    file_handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    file_handler.setFormatter(logging.Formatter(FORMAT))
    file_handler.setLevel(logging.INFO)
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(logging.Formatter(f"{stderr_prefix} %(levelname)s %(name)s: %(message)s"))
    console.setLevel(os.environ.get("LOKAL_LOG_LEVEL", "WARNING").upper())
    root.addHandler(file_handler)
    root.addHandler(console)

    crash_path = folder / f"{name}-crash.log"
    if crash_path.exists() and crash_path.stat().st_size > MAX_BYTES:
        crash_path.replace(crash_path.with_name(crash_path.name + ".1"))
    _crash_file = open(crash_path, "a", encoding="utf-8")  # noqa: SIM115 (kept open on purpose, see above)
    _crash_file.write(f"--- {name} pid {os.getpid()} started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    _crash_file.flush()
    faulthandler.enable(file=_crash_file, all_threads=True)

    previous_hook = sys.excepthook

    def log_uncaught(kind, value, tb):
        logging.getLogger("lokal").critical("uncaught exception", exc_info=(kind, value, tb))
        previous_hook(kind, value, tb)

    sys.excepthook = log_uncaught
    logging.getLogger("lokal").info("%s started (pid %d, Python %s)", name, os.getpid(), sys.version.split()[0])
    return path
