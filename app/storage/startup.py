"""Opening the conversations database when the window starts, with the user in the loop.

A locked, read-only or full database is not damaged: the user is told what
happened and what to do, and chooses Retry or Quit; nothing is moved or
deleted. A database from a newer Lokal is named with both schema versions and
left exactly as it is. Only a file SQLite proves damaged is set aside (the
store does that and returns a notice the window shows).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from app.storage.store import SchemaTooNew, Store, StoreUnavailable, open_or_set_aside
from app.ui.language import Context

Startup = Context("Startup")


def open_store_or_ask(path: str | Path | None = None, parent: QWidget | None = None) -> tuple[Store, str | None] | None:
    """(store, notice), or None when the user chose to quit (or the file belongs to a newer Lokal)."""
    while True:
        try:
            return open_or_set_aside(path)
        except SchemaTooNew as exc:
            QMessageBox.critical(
                parent,
                Startup.tr("Lokal is older than your conversations"),
                Startup.tr(
                    "Your conversations were saved by a newer version of Lokal (database schema {found}); "
                    "this Lokal knows schema {known} at most.\n\nInstall the newer Lokal to open them. "
                    "This version has left the file untouched:\n{path}"
                ).format(found=exc.found, known=exc.known, path=exc.path),
            )
            return None
        except StoreUnavailable as problem:
            box = QMessageBox(QMessageBox.Icon.Warning, Startup.tr("Lokal cannot open your conversations"), problem.message, parent=parent)
            box.setObjectName("storeUnavailableDialog")
            retry = box.addButton(Startup.tr("Retry"), QMessageBox.ButtonRole.AcceptRole)
            box.addButton(Startup.tr("Quit"), QMessageBox.ButtonRole.RejectRole)
            box.setDefaultButton(retry)
            box.exec()
            if box.clickedButton() is not retry:
                return None
