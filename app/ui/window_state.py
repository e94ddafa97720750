"""What the window keeps between starts in the store's state table: its geometry, the splitter's sizes and
whether the metrics panel shows (saved when it closes, restored when it opens), and the language chosen
in View ▸ Language (app/ui/language/menu.py).

app/ui depends on no storage code: the store is anything with get_state/set_state (app.storage.Store).
"""

from __future__ import annotations

from typing import Protocol



class StateStore(Protocol):
    """Small named values kept across starts (a missing key reads as `default`; None deletes it)."""

    def get_state(self, key: str, default: str | None = None) -> str | None: ...

    def set_state(self, key: str, value: str | None) -> None: ...
