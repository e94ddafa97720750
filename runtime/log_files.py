"""Log files a user can find: one rotating log per process kind, and native crash stacks beside it.

A user who double-clicked an installer never sees stderr, so the window and the
runtime each write `<name>.log` in the platform's log folder (runtime.paths.log_dir,
shown in Help ▸ About and opened by Help ▸ Open log folder). stderr keeps getting
what LOKAL_LOG_LEVEL asks for (WARNING by default), as before.

faulthandler writes the Python stack of every thread when the process dies of
a signal (SIGSEGV in Qt or llama.cpp, SIGABRT, ...). It needs a file descriptor
that stays valid until the crash, which a rotating handler's stream is not (it
is closed at each rollover), so the stacks go to `<name>-crash.log` in the same
folder, opened for appending once and kept open.

Several runtime processes (the window's, `lokal serve`'s, `lokal chat`'s) write
runtime.log at once, and every line carries its process id. The standard
RotatingFileHandler is not safe for that: each process rotates by the size of
the file it holds open, so one renames the file another is still writing, and
concurrent rollovers delete each other's backups (lines lost). So the log goes
through concurrent-log-handler, which takes a lock file beside the log for each
write and rollover and reopens a file that another process rotated.

The log files and the crash files are 0600: what a user typed can end up in them.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from concurrent_log_handler import ConcurrentRotatingFileHandler
from filelock import FileLock

from runtime.paths import log_dir
from runtime.private_files import FILE_MODE, private_opener

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
    # chmod, not its umask option: that one changes the whole process's umask for a moment, under other threads.
    file_handler = ConcurrentRotatingFileHandler(str(path), maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", chmod=FILE_MODE)
    file_handler.setFormatter(logging.Formatter(FORMAT))
    file_handler.setLevel(logging.INFO)
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(logging.Formatter(f"{stderr_prefix} %(levelname)s %(name)s: %(message)s"))
    console.setLevel(os.environ.get("LOKAL_LOG_LEVEL", "WARNING").upper())
    root.addHandler(file_handler)
    root.addHandler(console)

    crash_path = folder / f"{name}-crash.log"
    # Two processes starting together must not both move the file: the second would move the first's new one.
    with FileLock(folder / f".{name}-crash.log.lock", mode=FILE_MODE):
        if crash_path.exists() and crash_path.stat().st_size > MAX_BYTES:
            crash_path.replace(crash_path.with_name(crash_path.name + ".1"))
        _crash_file = open(crash_path, "a", encoding="utf-8", opener=private_opener)  # noqa: SIM115 (kept open on purpose, see above)
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
