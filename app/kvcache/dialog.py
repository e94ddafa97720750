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
from app.ui.accessibility import describe_buttons
from app.ui.language import Context
from runtime.protocol import KvClearResult, KvStoreInfo


KvCache = Context("KvCache")


def describe(info: KvStoreInfo) -> dict[str, tuple[str, str]]:
    """The dialog's rows from a KvStoreInfo, by key (the English label): (label as shown, value); no widgets, so it is easy to test."""
    if not info.enabled:
        return {"Status": (KvCache.tr("Status"), KvCache.tr("off (LOKAL_KV_STORE=off): conversations are not saved"))}
    return {
        "Conversations saved": (KvCache.tr("Conversations saved"), f"{info.entries:,}"),
        "On disk": (KvCache.tr("On disk"), KvCache.tr("{used} of {budget}").format(used=human_size(info.disk_bytes), budget=human_size(info.disk_budget_bytes))),
        "In memory": (KvCache.tr("In memory"), KvCache.tr("{used} of {budget}").format(used=human_size(info.ram_bytes), budget=human_size(info.ram_budget_bytes))),
        "Folder": (KvCache.tr("Folder"), info.path),
    }


class KvCacheDialog(QDialog):
    def __init__(self, store: KvStore, parent=None):
        super().__init__(parent)
        self.store = store
        self.setWindowTitle(self.tr("Saved conversation caches"))
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        intro = QLabel(self.tr(
            "After each reply Lokal saves the conversation's KV cache, so reopening it later, even after a "
            "restart, starts answering at once instead of reading the whole conversation again."
        ))
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.form = QFormLayout()
        layout.addLayout(self.form)
        self.status = QLabel()
        self.status.setObjectName("hint")
        layout.addWidget(self.status)
        buttons = describe_buttons(QDialogButtonBox(QDialogButtonBox.StandardButton.Close))
        self.clear_button = QPushButton(self.tr("Clear all…"))
        self.clear_button.setAccessibleDescription(self.tr("Delete every saved conversation cache; the conversations stay"))
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
        self.status.setText(self.tr("Asking the runtime…"))
        self.store.refresh()

    def _show(self, info: KvStoreInfo) -> None:
        self.info = info
        while self.form.rowCount():
            self.form.removeRow(0)
        for key, (label, value) in describe(info).items():
            field = QLabel(value)
            field.setObjectName(f"kv:{key}")
            field.setAccessibleName(label)
            self.form.addRow(label, field)
        self.clear_button.setEnabled(info.enabled and info.entries > 0)
        self.status.setText(self._note)
        self._note = ""
        # The rows arrive after the dialog was laid out: grow it to fit them once the layout has seen them.
        QTimer.singleShot(0, self, lambda: self.resize(self.width(), max(self.height(), self.sizeHint().height())))

    def _show_error(self, message: str) -> None:
        self.status.setText(self.tr("Could not read the cache store: {reason}").format(reason=message))

    def value_of(self, key: str) -> str | None:
        """The value of the row `key` (its English label)."""
        field = self.findChild(QLabel, f"kv:{key}")
        return field.text() if field is not None else None

    def _on_clear(self) -> None:
        if self.info is None:
            return
        answer = QMessageBox.question(
            self, self.tr("Clear saved caches?"),
            self.tr("Delete the saved caches of %Ln conversation(s), {size}?", "", self.info.entries).format(size=human_size(self.info.disk_bytes))
            + " " + self.tr("The conversations themselves are kept; their next reply reads them again from the start."),
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.clear()

    def clear(self) -> None:
        self.status.setText(self.tr("Clearing…"))
        self.clear_button.setEnabled(False)
        self.store.clear()

    def _on_cleared(self, result: KvClearResult) -> None:
        self._note = self.tr("Removed %Ln file(s), {size} freed.", "", result.removed_files).format(size=human_size(result.freed_bytes))
        self.status.setText(self.tr("Asking the runtime…"))
