"""One free-space floor that everything Lokal writes in bulk respects: saved KV states and downloads.

Either can take gigabytes (the KV store's budget is 5 GB; a model is what it is). Filling the disk
would push the conversation database into its deferred-write mode (app/storage) and starve every
other program, so neither writes past a floor of free space: 1 GiB or 5 % of the volume, whichever is
more, and never more than a quarter of a small volume (which would otherwise take nothing at all).
The KV store evicts its oldest states to stay above it, or keeps a state in RAM only; a download that
would cross it is refused with DISK_FULL before it starts, and stops if the disk fills meanwhile.

LOKAL_DISK_FLOOR_BYTES sets the floor in bytes (tests use it on a small real filesystem).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

FLOOR_ENV = "LOKAL_DISK_FLOOR_BYTES"
MIN_FLOOR = 1 << 30
FLOOR_SHARE = 0.05
MAX_SHARE = 0.25


def _existing(path: Path) -> Path:
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_bytes(path: Path) -> int:
    """Free bytes on the volume that holds `path` (or would: the nearest folder that exists)."""
    return shutil.disk_usage(_existing(path)).free


def floor_bytes(path: Path) -> int:
    """The free space that must stay on the volume of `path`."""
    chosen = os.environ.get(FLOOR_ENV)
    if chosen:
        try:
            return max(0, int(chosen))
        except ValueError:
            raise ValueError(f"{FLOOR_ENV} must be a whole number of bytes, got {chosen!r}") from None
    total = shutil.disk_usage(_existing(path)).total
    return min(max(MIN_FLOOR, int(total * FLOOR_SHARE)), int(total * MAX_SHARE))


def room_bytes(path: Path) -> int:
    """How much may still be written on the volume of `path` before it reaches the floor (negative: below it)."""
    return free_bytes(path) - floor_bytes(path)
