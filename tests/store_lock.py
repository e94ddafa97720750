"""Another process holding a conversation store's SQLite write lock, for the store's fault tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HOLD_LOCK = (
    "import sqlite3, sys\n"
    "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "db.execute('BEGIN EXCLUSIVE')\n"
    "print('locked', flush=True)\n"
    "sys.stdin.read()\n"
)


class LockHolder:
    """Another process with the database in BEGIN EXCLUSIVE until release()."""

    def __init__(self, path: Path):
        self.process = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "locked"

    def release(self) -> None:
        """Let go of the lock (the process ends); a second call does nothing."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        self.process.wait(timeout=30)
