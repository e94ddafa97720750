"""What the window keeps between starts in the store's state table: its geometry, the splitter's sizes, the
widths the user gave the side panes, and whether the metrics panel shows (saved when it closes, restored when
it opens), and the language chosen in View ▸ Language (app/ui/language/menu.py).

app/ui depends on no storage code: the store is anything with get_state/set_state (app.storage.Store).
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QByteArray
from PySide6.QtWidgets import QSplitter, QWidget

from app.ui.layout import ThreePanes

GEOMETRY = "window_geometry"
SPLITTER = "splitter_state"
METRICS_VISIBLE = "metrics_visible"
SIDE_WIDTHS = "side_pane_widths"  # the widths the user gave the side panes (ThreePanes.chosen): "240,300"



class StateStore(Protocol):
    """Small named values kept across starts (a missing key reads as `default`; None deletes it)."""

    def get_state(self, key: str, default: str | None = None) -> str | None: ...

    def set_state(self, key: str, value: str | None) -> None: ...


def restore_layout(store: StateStore, window: QWidget, splitter: QSplitter) -> bool:
    """Put the window and its splitter back as they were when it last closed; returns whether the metrics
    panel showed then (it does on a first start)."""
    geometry = store.get_state(GEOMETRY)
    if geometry:
        window.restoreGeometry(QByteArray.fromBase64(geometry.encode()))
    sizes = store.get_state(SPLITTER)
    if sizes:
        splitter.restoreState(QByteArray.fromBase64(sizes.encode()))
    widths = (store.get_state(SIDE_WIDTHS) or "").split(",")
    if isinstance(splitter, ThreePanes) and len(widths) == 2 and all(w.isdigit() for w in widths):
        splitter.chosen = [int(w) for w in widths]  # not the sizes it closed at: a narrow window had squeezed them
        splitter.fit()
    return store.get_state(METRICS_VISIBLE, "1") == "1"


def save_layout(store: StateStore, window: QWidget, splitter: QSplitter, metrics_visible: bool) -> None:
    """Keep the window's geometry, the splitter's sizes, the side panes' chosen widths and whether the metrics panel
    shows, for the next start."""
    store.set_state(GEOMETRY, _text(window.saveGeometry()))
    store.set_state(SPLITTER, _text(splitter.saveState()))
    if isinstance(splitter, ThreePanes):
        store.set_state(SIDE_WIDTHS, ",".join(str(width) for width in splitter.chosen))
    store.set_state(METRICS_VISIBLE, "1" if metrics_visible else "0")


def _text(data: QByteArray) -> str:
    return bytes(data.toBase64().data()).decode()
