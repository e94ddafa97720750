"""Collects a DownloadManager's progress updates; tests wait on them (bounded) instead of sleeping."""

from __future__ import annotations

import threading
import time

from waiting import wait_until

TERMINAL = ("done", "failed", "cancelled", "paused")


class Recorder:
    """Collects progress updates; wait() returns the first update in a terminal state."""

    def __init__(self):
        self.updates = []
        self._lock = threading.Lock()

    def __call__(self, info):
        with self._lock:
            self.updates.append((time.monotonic(), info))

    def wait(self, download_id, states=TERMINAL, timeout=60):
        return self.wait_until(lambda info: info.id == download_id and info.state in states, f"a {states} update for {download_id}", timeout)

    def wait_until(self, condition, what="the condition", timeout=60):
        """The first update for which `condition(info)` holds, waiting for it (bounded)."""

        def found():
            with self._lock:
                return next((info for _t, info in self.updates if condition(info)), None)

        return wait_until(found, timeout, lambda: f"{what} (last update: {self.updates[-1:]})")

    def clear(self):
        with self._lock:
            self.updates.clear()
