"""Who has a say before the window closes: the close guards features add (app/api asks whether to keep
serving in the background), then the unsaved replies (app/storage/unsaved.py).

A guard that returns False keeps the window open and asks its question asynchronously; its answer ends
with quit_now() (close for good, without asking the guards again), hiding the window, or nothing.
"""

from __future__ import annotations

from typing import Callable


class CloseGuards:
    def __init__(self, last_say: Callable[[], bool]):
        self._guards: list[Callable[[], bool]] = []
        self._last_say = last_say  # asked after the guards, even when quit_now() skips them
        self._confirmed = False  # quit_now(): the guards had their say

    def add(self, guard: Callable[[], bool]) -> None:
        self._guards.append(guard)

    def confirm(self) -> None:
        """The next close does not ask the guards again."""
        self._confirmed = True

    def may_close(self) -> bool:
        """Whether the window may close now; False while a question about it is shown."""
        if not self._confirmed and not all(guard() for guard in self._guards):
            return False
        self._confirmed = False
        return self._last_say()
