"""The engine's one job slot, taken in turn by the protocol client and by the API served in this process.

llama.cpp's context runs one job at a time. The protocol client (the window, the
CLI) queues its jobs on its own side and may have one here at a time: a second
is refused with BUSY, as the protocol says. The API queues its requests in its
own FIFO (with 429 when full) and hands one at a time to this slot. So at most
one job of each waits here, and they take turns in the order they came: neither
side fails because the other one is busy.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

PROTOCOL, API = "protocol", "api"  # who asked for a job


@dataclass(eq=False)
class Job:
    request_id: Any
    method: str
    owner: str = PROTOCOL
    cancel: threading.Event = field(default_factory=threading.Event)
    started: bool = False  # it has the slot and runs


class JobSlot:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._line: list[Job] = []  # in order of arrival; the first one runs once it has started

    def join(self, job: Job) -> None:
        with self._changed:
            self._line.append(job)

    def wait_turn(self, job: Job) -> bool:
        """Block until `job` is first in line (True), or until it is cancelled before it ran (False: it leaves the line)."""
        with self._changed:
            while self._line[0] is not job and not job.cancel.is_set():
                self._changed.wait()
            if job.cancel.is_set():
                self._line.remove(job)
                self._changed.notify_all()
                return False
            job.started = True
            return True

    def leave(self, job: Job) -> None:
        with self._changed:
            if job in self._line:
                self._line.remove(job)
            self._changed.notify_all()

    def cancel(self, job: Job) -> None:
        """Stop a running job (it checks its event) or take a waiting one out of the line."""
        job.cancel.set()
        with self._changed:
            self._changed.notify_all()

    def jobs(self, owner: str | None = None) -> list[Job]:
        with self._changed:
            return [job for job in self._line if owner is None or job.owner == owner]

    @property
    def running(self) -> Job | None:
        with self._changed:
            return self._line[0] if self._line and self._line[0].started else None

    def first_in_line(self) -> Job | None:
        with self._changed:
            return self._line[0] if self._line else None
