"""The one way tests wait: for a condition to hold, with a bound, never for a fixed time.

A test that must show something did *not* happen waits for an event that proves the moment has passed
(a later message, a finished job) and then checks; it never sleeps and hopes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# What a wait is for, as a text or as a function that gives it when the wait fails (so it can show the
# last state seen: the last notification, the process's stderr).
What = str | Callable[[], str]


def _failed(what: What, timeout: float) -> AssertionError:
    return AssertionError(f"{what() if callable(what) else what} did not happen within {timeout:g} s")


def wait_until(condition: Callable[[], T | None], timeout: float = 30.0, what: What = "the condition", interval: float = 0.01) -> T:
    """Return `condition()`'s first truthy value; raise AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise _failed(what, timeout)
        time.sleep(interval)


def qt_wait_until(condition: Callable[[], T | None], timeout: float = 30.0, what: What = "the condition") -> T:
    """`wait_until` for code that needs Qt's event loop to run meanwhile (signals, queued calls, timers)."""
    from PySide6.QtCore import QEventLoop, QTimer

    deadline = time.monotonic() + timeout
    loop = QEventLoop()
    timer = QTimer()

    def check() -> None:
        if condition() or time.monotonic() > deadline:
            loop.quit()

    timer.timeout.connect(check)
    timer.start(10)
    try:
        value = condition()
        if not value:
            loop.exec()
            value = condition()
    finally:
        timer.stop()
    if not value:
        raise _failed(what, timeout)
    return value
