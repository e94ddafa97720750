"""The GGUF files on this machine (Lokal's models folder and the Hugging Face cache) as a Qt tree model.

The headers are read by a child process (app/models/scan.py) started with
QProcess; its JSON lines arrive through readyRead, so the window never waits.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from app.formatting import human_size
from PySide6.QtCore import QObject, QProcess, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel

from app.models.scan import LocalModelFile

PathRole = Qt.ItemDataRole.UserRole + 1
FileRole = Qt.ItemDataRole.UserRole + 2


def scan_command() -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, "scan-models"]
    return [sys.executable, "-m", "app.models.scan"]




class LocalModels(QObject):
    """A tree model: one row per model, under it one row per quantization file."""

    sig_scanned = Signal()

    def __init__(self, dirs: list[Path] | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.dirs = dirs
        self.model = QStandardItemModel(self)
        self.files: list[LocalModelFile] = []
        self.errors: dict[str, str] = {}
        self._found: list[LocalModelFile] = []
        self._found_errors: dict[str, str] = {}
        self._buffer = b""
        self._process: QProcess | None = None
        self._rescan = False

    @property
    def scanning(self) -> bool:
        return self._process is not None

    def scan(self) -> None:
        if self._process is not None:
            self._rescan = True  # something changed while this scan ran: run again when it ends
            return
        self._rescan = False
        self._found, self._found_errors, self._buffer = [], {}, b""
        process = QProcess(self)
        process.readyReadStandardOutput.connect(self._on_output)
        process.finished.connect(self._on_finished)
        command = scan_command() + [str(d) for d in (self.dirs or [])]
        self._process = process
        process.start(command[0], command[1:])

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.finished.disconnect()
            process.readyReadStandardOutput.disconnect()
            process.kill()
            process.waitForFinished(1_000)
            process.deleteLater()

    def _on_output(self) -> None:
        self._buffer += bytes(self._process.readAllStandardOutput())
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if "file" in data:
                self._found.append(LocalModelFile(**data["file"]))
            elif "error" in data:
                self._found_errors[data["error"]["path"]] = data["error"]["message"]

    def _on_finished(self, *_args) -> None:
        self._on_output()
        self._process.deleteLater()
        self._process = None
        self._publish(self._found, self._found_errors)
        if self._rescan:
            self.scan()

    def _publish(self, files: list[LocalModelFile], errors: dict) -> None:
        self.files, self.errors = files, errors
        self.model.clear()
        groups: dict[str, QStandardItem] = {}
        for info in sorted(files, key=lambda f: (f.model.lower(), f.size)):
            group = groups.get(info.model)
            if group is None:
                group = groups[info.model] = QStandardItem(info.model)
                group.setEditable(False)
                self.model.appendRow(group)
            item = QStandardItem(f"{info.quantization}  ·  {human_size(info.size)}")
            item.setEditable(False)
            item.setData(info.path, PathRole)
            item.setData(info, FileRole)
            item.setToolTip(info.path)
            group.appendRow(item)
        self.sig_scanned.emit()

    def file_for(self, path: str) -> LocalModelFile | None:
        real = os.path.realpath(path)
        return next((f for f in self.files if os.path.realpath(f.path) == real), None)
