"""Opening the conversations database when the window starts, with the user in the loop.

A locked, read-only or full database is not damaged: the user is told what
happened and what to do, and chooses Retry or Quit; nothing is moved or
deleted. A database from a newer Lokal is named with both schema versions and
left exactly as it is. Only a file SQLite proves damaged is set aside (the
store does that and returns a notice the window shows).

The opening itself runs on a worker thread while this one keeps its event loop
going: the store's quick_check reads the whole file, about a second for 10,000
conversations (bench/store_open.py), and meanwhile a second Lokal started by the
user still gets its answer from the single-instance guard (issue #27).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from app.storage.store import SchemaTooNew, Store, StoreUnavailable, open_or_set_aside
from app.ui.language import Context

Startup = Context("Startup")


class _Opened(QObject):
    sig_done = Signal()  # emitted on the worker thread; delivered, queued, to the waiting event loop


def open_off_this_thread(path: str | Path | None = None) -> tuple[Store, str | None]:
    """open_or_set_aside on a worker thread, this thread's event loop running until it is done; raises what it raises.

    The store's connection is handed over with it: it is used by one thread at a time (Store).
    """
    loop = QEventLoop()
    opened = _Opened()
    opened.sig_done.connect(loop.quit, Qt.ConnectionType.QueuedConnection)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lokal-store-open") as worker:
        future = worker.submit(open_or_set_aside, path)
        future.add_done_callback(lambda _future: opened.sig_done.emit())
        if not future.done():
            loop.exec()  # a quit queued just before this runs still ends it
        return future.result()


def open_store_or_ask(path: str | Path | None = None, parent: QWidget | None = None) -> tuple[Store, str | None] | None:
    """(store, notice), or None when the user chose to quit (or the file belongs to a newer Lokal)."""
    while True:
        try:
            if QCoreApplication.instance() is None:
                return open_or_set_aside(path)
            return open_off_this_thread(path)
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
