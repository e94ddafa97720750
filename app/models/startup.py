"""The model the window starts with: the file the user chose last, else the starter model.

The user's choice of a local model (the Model menu, a file opened or dropped) is kept in the store
as "model_path" and loads again at the next start, if the file is still there. Without one, the
starter model loads; when it is not on disk yet, it is fetched first in a child process
(app/models/starter.py StarterFetch), and the window shows its progress from the signals here.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.models.starter import StarterFetch, first_model
from app.ui.window_state import StateStore

MODEL_PATH = "model_path"  # the store's state key: the local model the user chose last


class StartupModel(QObject):
    sig_status = Signal(str)  # what the starter model's fetch is doing
    sig_progress = Signal(float)  # 0..1 of its bytes
    sig_fetch_ended = Signal()  # the fetch is over, fetched or not: its status and progress can go
    sig_failed = Signal(str)  # why the starter model could not be fetched

    def __init__(self, store: StateStore, load: Callable[[str], None], rescan: Callable[[], None], parent: QObject | None = None):
        super().__init__(parent)
        self.store = store
        self._load = load  # loads a file with its load settings (the window's load_model)
        self._rescan = rescan  # looks for the model files on disk again
        self.fetch: StarterFetch | None = None  # the starter model's fetch, once one started

    def start(self) -> None:
        """The window opened: load the model chosen last, else the starter model (fetched first if need be)."""
        path = first_model(self.store.get_state(MODEL_PATH))
        if path:
            self._load(path)
            return
        self.fetch = StarterFetch(self)
        self.fetch.sig_status.connect(self.sig_status)
        self.fetch.sig_progress.connect(self.sig_progress)
        self.fetch.sig_done.connect(self._on_fetched)
        self.fetch.sig_failed.connect(self._on_failed)
        self.fetch.start()

    def choose(self, path: str) -> None:
        """The user chose the local model at `path`: it loads now, and at the next start."""
        self.store.set_state(MODEL_PATH, path)
        self._load(path)

    def stop(self) -> None:
        """The window closes: end a fetch still running (what it fetched is kept, and resumed next time)."""
        if self.fetch is not None:
            self.fetch.stop()

    def _on_fetched(self, path: str) -> None:
        self.sig_fetch_ended.emit()
        self._rescan()
        self._load(path)

    def _on_failed(self, reason: str) -> None:
        self.sig_fetch_ended.emit()
        self.sig_failed.emit(reason)
