"""The engine's line of jobs, shared by the protocol client and by the API served in this process.

Replies (chat.generate) run together: the scheduler (runtime/scheduler) decodes
them in one batch, so any number may be in the engine at once. Loading or
unloading a model is exclusive: it waits for every job that came before it to
finish, and every job that comes after it waits for it. Jobs start in the order
they came, so neither the protocol client nor the API fails because the other one
is busy. The protocol's rules on what a client may have in flight (BUSY) are the
server's (runtime/server.py); the API bounds its own queue (runtime/api/backend.py).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

PROTOCOL, API = "protocol", "api"  # who asked for a job; also whose KV caches a reply may reuse


class CancelEvent(threading.Event):
    """A job's cancel flag, which also tells whoever registered to be told (the scheduler, for a reply in it)."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []
        self._callbacks_lock = threading.Lock()

    def on_set(self, callback: Callable[[], None]) -> None:
        """Call `callback` when the event is set (at once if it already is)."""
        with self._callbacks_lock:
            if not self.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def set(self) -> None:
        with self._callbacks_lock:
            super().set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


@dataclass(eq=False)
class Job:
    request_id: Any
    method: str
    owner: str = PROTOCOL
    conversation_id: str | None = None  # a reply's conversation
    cancel: CancelEvent = field(default_factory=CancelEvent)
    started: bool = False  # it has its turn and runs
    # A reply's: tells the scheduler it is no longer on its way (Scheduler.expect), once it is submitted or is not to be.
    arrived: Callable[[], None] | None = None

    @property
    def exclusive(self) -> bool:
        """A model load or unload: the engine does nothing else meanwhile."""
        return self.method != "chat.generate"


class JobSlot:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._line: list[Job] = []  # in order of arrival; those that started are running

    def join(self, job: Job) -> None:
        with self._changed:
            self._line.append(job)

    def _may_start(self, job: Job) -> bool:
        ahead = self._line[: self._line.index(job)]
        if job.exclusive:
            return not ahead
        return not any(other.exclusive for other in ahead)

    def wait_turn(self, job: Job) -> bool:
        """Block until `job` may run (True), or until it is cancelled before it ran (False: it leaves the line)."""
        with self._changed:
            while not self._may_start(job) and not job.cancel.is_set():
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

    def running(self) -> list[Job]:
        with self._changed:
            return [job for job in self._line if job.started]

    def would_wait(self, job: Job) -> bool:
        with self._changed:
            return job in self._line and not self._may_start(job)
