"""The window's "Serve the API" toggle: `lokal serve --json` as a QProcess, serving the model the window has loaded.

The child prints one JSON object per event (listening, the model's state);
readyRead turns each into a signal. The key is the one `lokal serve` uses,
read (or made) from the same 0600 file, so the window can show it.
"""

from __future__ import annotations

import collections
import json
import sys

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from runtime.api import keys

STOPPED, STARTING, LOADING, READY, FAILED = "stopped", "starting", "loading", "ready", "failed"
STOP_GRACE_MS = 10_000
DEFAULT_PORT = 8080


def serve_command() -> list[str]:
    """Through the same executable as everything else: the frozen app runs itself with `serve`."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "serve"]
    return [sys.executable, "-m", "app", "serve"]


class ApiServer(QObject):
    sig_state_changed = Signal(str)
    sig_listening = Signal(str)  # the base URL, http://127.0.0.1:PORT/v1
    sig_failed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.state = STOPPED
        self.port = DEFAULT_PORT  # 0: any free port (the listening event says which)
        self.url = ""
        self.model = ""
        self._process: QProcess | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._stdout_buffer = b""
        self._stopping = False

    @property
    def key(self) -> str:
        return keys.load_or_create()

    @property
    def running(self) -> bool:
        return self._process is not None

    def start(self, model_path: str, port: int | None = None, n_ctx: int = 4096, extra_args: list[str] | None = None) -> None:
        if self._process is not None:
            return
        keys.load_or_create()  # the key exists before the first request can need it
        process = QProcess(self)
        command = serve_command() + ["--json", "--port", str(self.port if port is None else port), "--model", model_path, "--n-ctx", str(n_ctx), *(extra_args or [])]
        process.readyReadStandardOutput.connect(self._on_stdout)
        process.readyReadStandardError.connect(self._on_stderr)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self._process = process
        self._stdout_buffer = b""
        self._stderr.clear()
        self.url = ""
        self._stopping = False
        self._set_state(STARTING)
        process.start(command[0], command[1:])

    def stop(self) -> None:
        """Ask it to stop (SIGTERM: it shuts its runtime down cleanly); kill it if it does not in time."""
        process = self._process
        if process is None:
            return
        self._stopping = True
        process.terminate()
        # Owned by the process: it goes when the process object goes, and never fires at a deleted one.
        deadline = QTimer(process)
        deadline.setSingleShot(True)
        deadline.timeout.connect(process.kill)
        deadline.start(STOP_GRACE_MS)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.sig_state_changed.emit(state)

    def _on_stdout(self) -> None:
        self._stdout_buffer += bytes(self._process.readAllStandardOutput().data())
        while b"\n" in self._stdout_buffer:
            line, self._stdout_buffer = self._stdout_buffer.split(b"\n", 1)
            try:
                event = json.loads(line)
            except ValueError:
                continue  # not one of its events
            self._on_event(event)

    def _on_event(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "listening":
            self.url = event.get("url", "")
            self.model = event.get("model", "")
            self.sig_listening.emit(self.url)
        elif kind == "state":
            state = event.get("state")
            if state == "failed":
                self._set_state(FAILED)
                self.sig_failed.emit(f"the API could not load the model: {event.get('error')}")
            elif state in (LOADING, READY):
                self._set_state(state)

    def _on_stderr(self) -> None:
        text = bytes(self._process.readAllStandardError().data()).decode("utf-8", errors="replace")
        self._stderr.extend(line for line in text.splitlines() if line.strip())

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._process.deleteLater()
            self._process = None
            self._set_state(FAILED)
            self.sig_failed.emit("could not start `lokal serve`")

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        if self._process is not None:
            self._process.deleteLater()
        self._process = None
        self.url = ""
        if not self._stopping and self.state in (STARTING, LOADING, READY):
            tail = "\n".join(self._stderr)
            self._set_state(FAILED)
            self.sig_failed.emit(f"the API server stopped (exit code {code})" + (f":\n{tail}" if tail else ""))
            return
        self._set_state(STOPPED)
