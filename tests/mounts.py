"""Real small or read-only filesystems for the fault tests: a tmpfs mounted for the test's duration.

Mounting needs root (or CAP_SYS_ADMIN): the test machines and CI run as root. Where it cannot be done,
the test fails and says so; a fault that cannot be staged is not a fault that was handled.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True)


@contextlib.contextmanager
def tmpfs(where: Path, size: str):
    """A tmpfs of `size` (mount's syntax: 1m, 80m) mounted at `where` until the block ends."""
    where.mkdir(parents=True, exist_ok=True)
    done = _run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where))
    if done.returncode != 0:
        pytest.fail(
            f"cannot mount a tmpfs at {where} ({done.stderr.strip() or 'mount failed'}): this fault test needs root "
            f"(or CAP_SYS_ADMIN); run the suite as root, as scripts/dev.sh test does in CI (uid now: {os.getuid()})"
        )
    try:
        yield where
    finally:
        _run("umount", "-l", str(where))


def remount(where: Path, read_only: bool) -> None:
    done = _run("mount", "-o", f"remount,{'ro' if read_only else 'rw'}", str(where))
    if done.returncode != 0:
        pytest.fail(f"cannot remount {where} {'read-only' if read_only else 'read-write'}: {done.stderr.strip()}")


def fill(where: Path) -> Path:
    """Write a file until the filesystem is full; delete it to free the space again."""
    filler = where / "filler"
    chunk = b"\0" * 65536
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError:
            pass
        try:  # the last few bytes a whole chunk did not fit into
            while True:
                f.write(b"\0" * 512)
        except OSError:
            pass
    return filler
