"""Collects a DownloadManager's progress updates; tests wait on them (bounded) instead of sleeping."""

from __future__ import annotations

import threading
import time

TERMINAL = ("done", "failed", "cancelled", "paused")


class Recorder:
    """Collects progress updates; wait() returns the first update in a terminal state."""

    def __init__(self):
        self.updates = []
        self.cond = threading.Condition()

    def __call__(self, info):
        with self.cond:
            self.updates.append((time.monotonic(), info))
            self.cond.notify_all()

    def wait(self, download_id, states=TERMINAL, timeout=60):
        return self.wait_until(lambda info: info.id == download_id and info.state in states, f"no {states} update for {download_id}", timeout)

    def wait_until(self, condition, what="the condition never held", timeout=60):
        """The first update for which `condition(info)` holds, waiting for it (bounded)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for _t, info in self.updates:
                    if condition(info):
                        return info
                left = deadline - time.monotonic()
                assert left > 0, f"{what}; last: {self.updates[-1:]}"
                self.cond.wait(left)

    def clear(self):
        with self.cond:
            self.updates.clear()
