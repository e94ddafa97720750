"""File ▸ Import conversations…: pick a file, import it in a child process, and say what came in.

A large export (ChatGPT's runs to hundreds of MB) takes seconds of JSON parsing, checking and writing. On a
thread of the window that Python held the GIL, and the event loop waited: a 65 MiB export froze the window for 8-10 s.
So `lokal import --json` (command.py) does it all, through this same executable, writing through a connection of
its own in short transactions (Store.add_conversations: the window's own writes wait tens of milliseconds, not the
whole import); the window shows its progress lines in the status bar, with Cancel, and then its summary line.

Cancel closes the child's standard input, and the child stops and deletes what it had written, which was never
shown (app/storage/pending_imports.py), in short transactions as it wrote them: the window's thread does none of
that work. A child killed instead (the window closed mid-import) leaves it to the next start.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.features import FeatureContext
from app.importing import command
from app.importing.progress_widget import ImportProgress
from app.importing.service import ImportedInto, ImportedSoFar
from app.ui.menus import MenuId

log = logging.getLogger("lokal.importing")
CANCEL_GRACE_MS = 30_000  # a cancelled import ends well within this; one still running then is killed


class ImportCommand(QObject):
    sig_finished = Signal(object)  # an ImportedInto, or the error's text

    def __init__(self, context: FeatureContext):
        super().__init__(context.window())
        self.context = context
        self.chat = context.chat
        self.busy = False
        self.last_message = ""  # what the summary said last (the window's tests read it)
        self._process: QProcess | None = None
        self._file = ""
        self._lines: list[str] = []  # the child's whole lines on stdout that are not progress (its summary is the last)
        self._partial = b""
        self._cancelled = False
        self._grace = QTimer(self)  # a cancelled import that has not ended by then is killed: what it wrote stays hidden
        self._grace.setSingleShot(True)
        self._grace.setInterval(CANCEL_GRACE_MS)
        self._grace.timeout.connect(lambda: self._process.kill() if self._process is not None else None)
        self.progress = ImportProgress()
        self.progress.sig_cancel.connect(self.cancel)
        context.add_status_widget(self.progress)
        menu = context.menu(MenuId.FILE)
        quit_action = next((a for a in menu.actions() if a.menuRole() == QAction.MenuRole.QuitRole), None)
        self.action = QAction(self.tr("&Import conversations…"), menu)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+I"))
        self.action.triggered.connect(self.choose_file)
        before = menu.actions()[menu.actions().index(quit_action) - 1] if quit_action is not None else None
        menu.insertAction(before, self.action) if before is not None else menu.addAction(self.action)

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
        self._file = Path(path).name
        self._lines, self._partial, self._cancelled = [], b"", False
        self.progress.show_reading(self._file)
        process = self._process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        process.readyReadStandardOutput.connect(self._on_output)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        argv = command.command(path, self.chat.store.path)
        process.start(argv[0], argv[1:])
        return True

    def cancel(self) -> None:
        """Stop the running import; nothing of its file stays (see the module's docstring)."""
        if self._process is None or self._cancelled:
            return
        self._cancelled = True
        self.progress.show_cancelling()
        self._process.closeWriteChannel()  # `--stop-when-stdin-closes`: it stops, takes back what it wrote, and ends
        self._grace.start()

    def _on_output(self) -> None:
        assert self._process is not None
        *whole, self._partial = (self._partial + bytes(self._process.readAllStandardOutput().data())).split(b"\n")
        for raw in whole:
            line = raw.decode(errors="replace").strip()
            try:
                so_far = ImportedSoFar.from_json(json.loads(line))
            except ValueError:  # JSONDecodeError is one: the summary, or whatever else it said
                if line:
                    self._lines.append(line)
                continue
            if not self._cancelled:
                self.progress.show_writing(self._file, so_far.done, so_far.total)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart and self._process is not None:  # no finished signal follows
            self._done(self.tr("Could not start the import: {reason}").format(reason=self._process.errorString()))

    def _on_finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        process = self._process
        assert process is not None
        self._on_output()
        out = self._lines + ([self._partial.decode(errors="replace").strip()] if self._partial.strip() else [])
        err = bytes(process.readAllStandardError().data()).decode(errors="replace").strip().splitlines()
        try:
            said = json.loads(out[-1]) if out else None
        except json.JSONDecodeError:
            said = None
        try:
            outcome = ImportedInto.from_json(said)
        except ValueError:
            outcome = None
        if outcome is not None:  # a summary: it was all written, a Cancel too late to stop it included
            self._done(outcome)
            return
        if self._cancelled:
            self._end_cancelled()
            return
        if isinstance(said, dict) and isinstance(said.get("error"), str):
            self._done(said["error"])
            return
        log.warning("the import of %s ended with code %s and no summary; its last words: %s", self._file, code, err[-3:])
        self._done(self.tr("the import of {file} stopped (code {code}): {reason}").format(
            file=self._file, code=code, reason=err[-1] if err else self.tr("it gave no reason")))

    def _end_cancelled(self) -> None:
        text = self.tr("The import of {file} was cancelled: nothing was imported.").format(file=self._file)
        self._end()
        self.last_message = text
        self.context.show_status(text, 8000)
        self.sig_finished.emit(text)

    def _end(self) -> None:
        self.busy = False
        self.action.setEnabled(True)
        self._grace.stop()
        if self._process is not None:
            self._process.deleteLater()
        self._process = None
        self.progress.hide()

    def _done(self, outcome: ImportedInto | str) -> None:
        self._end()
        if isinstance(outcome, str):
            self._say(self.tr("Nothing was imported: {reason}").format(reason=outcome), error=True)
            self.sig_finished.emit(outcome)
            return
        self.chat.conversations.set_conversations(self.chat.store.conversations())
        if outcome.first_added is not None:
            self.chat.open(outcome.first_added)
        text = self.tr("Imported {added} conversations ({messages} messages) from {format}.").format(
            added=outcome.added, messages=outcome.messages, format=outcome.format)
        if outcome.skipped:
            text += " " + self.tr("{skipped} were imported before and were skipped.").format(skipped=outcome.skipped)
        if outcome.attachments_not_found:
            # An export names its files without their bytes (app/chat/export.py): only those kept here can be attached again.
            text += " " + self.tr("%n attached file(s) were not found on this computer and are not attached.", "", outcome.attachments_not_found)
        self._say(text)
        self.sig_finished.emit(outcome)

    def _say(self, text: str, error: bool = False) -> None:
        self.last_message = text
        box = QMessageBox(QMessageBox.Icon.Warning if error else QMessageBox.Icon.Information, self.tr("Import conversations"), text,
                          QMessageBox.StandardButton.Ok, self.context.window())
        box.setObjectName("importSummary")
        box.open()


def install(context: FeatureContext) -> ImportCommand:
    return context.add_feature("importing", ImportCommand(context))
