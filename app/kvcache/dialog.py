"""Edit ▸ Saved conversation caches…: the KV store's size against its budgets, and a button to clear it.

The figures come from the runtime (`kv.store_info`), asked when the dialog opens
and after a clear; clearing asks first, because the next turn of every saved
conversation will then prefill from scratch.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QMessageBox, QPushButton, QVBoxLayout

from app.formatting import human_size
from app.kvcache.store import KvStore
from runtime.protocol import KvClearResult, KvStoreInfo


def describe(info: KvStoreInfo) -> dict[str, str]:
    """The dialog's rows from a KvStoreInfo; no Qt, so it is easy to test."""
    if not info.enabled:
        return {"Status": "off (LOKAL_KV_STORE=off): conversations are not saved"}
    return {
        "Conversations saved": f"{info.entries:,}",
        "On disk": f"{human_size(info.disk_bytes)} of {human_size(info.disk_budget_bytes)}",
        "In memory": f"{human_size(info.ram_bytes)} of {human_size(info.ram_budget_bytes)}",
        "Folder": info.path,
    }


class KvCacheDialog(QDialog):
    def __init__(self, store: KvStore, parent=None):
        super().__init__(parent)
        self.store = store
        self.setWindowTitle("Saved conversation caches")
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "After each reply Lokal saves the conversation's KV cache, so reopening it later, even after a "
            "restart, starts answering at once instead of reading the whole conversation again."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.form = QFormLayout()
        layout.addLayout(self.form)
        self.status = QLabel()
        self.status.setObjectName("hint")
        layout.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.clear_button = QPushButton("Clear all…")
        self.clear_button.setEnabled(False)
        buttons.addButton(self.clear_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        self.clear_button.clicked.connect(self._on_clear)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.info: KvStoreInfo | None = None
        self._note = ""  # shown once the figures are back (what the last clear removed)
        store.sig_info.connect(self._show)
        store.sig_cleared.connect(self._on_cleared)
        store.sig_failed.connect(self._show_error)
        self.refresh()

    def refresh(self) -> None:
        self.status.setText("Asking the runtime…")
        self.store.refresh()

    def _show(self, info: KvStoreInfo) -> None:
        self.info = info
        while self.form.rowCount():
            self.form.removeRow(0)
        for label, value in describe(info).items():
            field = QLabel(value)
            field.setObjectName(f"kv:{label}")
            self.form.addRow(label, field)
        self.clear_button.setEnabled(info.enabled and info.entries > 0)
        self.status.setText(self._note)
        self._note = ""
        # The rows arrive after the dialog was laid out: grow it to fit them once the layout has seen them.
        QTimer.singleShot(0, self, lambda: self.resize(self.width(), max(self.height(), self.sizeHint().height())))

    def _show_error(self, message: str) -> None:
        self.status.setText(f"Could not read the cache store: {message}")

    def value_of(self, label: str) -> str | None:
        field = self.findChild(QLabel, f"kv:{label}")
        return field.text() if field is not None else None

    def _on_clear(self) -> None:
        if self.info is None:
            return
        answer = QMessageBox.question(
            self, "Clear saved caches?",
            f"Delete the saved caches of {self.info.entries:,} conversation(s), {human_size(self.info.disk_bytes)}? "
            "The conversations themselves are kept; their next reply reads them again from the start.",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.clear()

    def clear(self) -> None:
        self.status.setText("Clearing…")
        self.clear_button.setEnabled(False)
        self.store.clear()

    def _on_cleared(self, result: KvClearResult) -> None:
        self._note = f"Removed {result.removed_files:,} file(s), {human_size(result.freed_bytes)} freed."
        self.status.setText("Asking the runtime…")
