"""File ▸ Import conversations…: pick a file, read it off the GUI thread, write it, and say what came in.

Reading and checking a large export (ChatGPT's runs to hundreds of MB) runs on a worker thread; the
store is written on the GUI thread, in one transaction (service.py), as every other store call is.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.features import FeatureContext
from app.importing import service
from app.importing.conversation import ImportRefused, to_new
from app.storage.store import StoreUnavailable
from app.ui.menus import MenuId

log = logging.getLogger("lokal.importing")


class ImportCommand(QObject):
    sig_read = Signal(object, object)  # the file's (format, NewConversations), or an error: from the worker thread
    sig_finished = Signal(object)  # an ImportSummary, or the error's text

    def __init__(self, context: FeatureContext):
        super().__init__(context.window())
        self.context = context
        self.chat = context.chat
        self.busy = False
        self.last_message = ""  # what the summary said last (the window's tests read it)
        menu = context.menu(MenuId.FILE)
        quit_action = next((a for a in menu.actions() if a.menuRole() == QAction.MenuRole.QuitRole), None)
        self.action = QAction(self.tr("&Import conversations…"), menu)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+I"))
        self.action.triggered.connect(self.choose_file)
        before = menu.actions()[menu.actions().index(quit_action) - 1] if quit_action is not None else None
        menu.insertAction(before, self.action) if before is not None else menu.addAction(self.action)
        self.sig_read.connect(self._on_read)

    def choose_file(self) -> None:
        dialog = QFileDialog(self.context.window(), self.tr("Import conversations"), str(Path.home()),
                             self.tr("Conversation exports (*.json);;All files (*)"))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.import_path)
        dialog.open()

    def import_path(self, path: str | Path) -> bool:
        """Start importing `path`; False if an import is running already. sig_finished says how it went."""
        if self.busy:
            return False
        self.busy = True
        self.action.setEnabled(False)
        self.context.show_status(self.tr("Reading {file}…").format(file=Path(path).name))
        threading.Thread(target=self._read, args=(Path(path),), name="lokal-import", daemon=True).start()
        return True

    def _read(self, path: Path) -> None:
        try:
            name, conversations = service.read_file(path)
            self.sig_read.emit(name, [to_new(c) for c in conversations])
        except ImportRefused as exc:
            self.sig_read.emit(None, str(exc))
        except (OSError, MemoryError) as exc:
            self.sig_read.emit(None, self.tr("Could not read {file}: {reason}").format(file=path.name, reason=getattr(exc, "strerror", None) or exc))

    def _on_read(self, name: str | None, result: object) -> None:
        self.busy = False
        self.action.setEnabled(True)
        self.context.clear_status()
        if name is None:
            self._say(self.tr("Nothing was imported: {reason}").format(reason=result), error=True)
            self.sig_finished.emit(str(result))
            return
        assert isinstance(result, list)
        try:
            summary = service.write(self.chat.store, name, result)
        except StoreUnavailable as problem:
            self._say(self.tr("Nothing was imported: {reason}").format(reason=problem.message), error=True)
            self.sig_finished.emit(problem.message)
            return
        self.chat.conversations.set_conversations(self.chat.store.conversations())
        if summary.added:
            self.chat.open(summary.added[0].id)
        text = self.tr("Imported {added} conversations ({messages} messages) from {format}.").format(
            added=len(summary.added), messages=summary.messages, format=name)
        if summary.skipped:
            text += " " + self.tr("{skipped} were imported before and were skipped.").format(skipped=summary.skipped)
        if summary.attachments_not_found:
            # An export names its files without their bytes (app/chat/export.py): only those kept here can be attached again.
            text += " " + self.tr("%n attached file(s) were not found on this computer and are not attached.", "", summary.attachments_not_found)
        self._say(text)
        self.sig_finished.emit(summary)

    def _say(self, text: str, error: bool = False) -> None:
        self.last_message = text
        box = QMessageBox(QMessageBox.Icon.Warning if error else QMessageBox.Icon.Information, self.tr("Import conversations"), text,
                          QMessageBox.StandardButton.Ok, self.context.window())
        box.setObjectName("importSummary")
        box.open()


def install(context: FeatureContext) -> ImportCommand:
    return context.add_feature("importing", ImportCommand(context))
