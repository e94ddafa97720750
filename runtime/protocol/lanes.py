"""Where the runtime runs each method (the lane), declared once for the server and the clients."""

from __future__ import annotations

import enum


class Lane(enum.Enum):
    """Where the runtime runs a method, declared once here for the server and the clients."""

    ENGINE = "engine"  # the engine alone (job_slot.py): one at a time, and while one runs or waits a client's next engine or batch job gets BUSY
    BATCH = "batch"  # decoded together by the scheduler: a client may have several in flight, one per conversation (a second gets BUSY)
    POOL = "pool"  # a small thread pool: waits on the network or the disk, never on the engine
    IMMEDIATE = "immediate"  # answered on the reader thread at once, even while a reply streams
