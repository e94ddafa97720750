"""The window's "Serve the API" toggle: the window's own runtime serves the OpenAI-compatible API (`api.start`).

The API lives inside the runtime process the window talks to, so it serves the
model the window has loaded, shares its KV cache and saved conversation states,
and its replies take turns with the window's. If the runtime dies and restarts,
the API is started again on the same port. The key is read (or made) from the
same 0600 file the runtime uses, so the window can show it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.runtime_link import RuntimeLink
from runtime.api import keys
from runtime.protocol import ApiStartParams, ApiStartResult, ErrorCode, RpcError, methods

STOPPED, STARTING, READY, FAILED = "stopped", "starting", "ready", "failed"
DEFAULT_PORT = 8080
CALL_TIMEOUT_MS = 60_000


class ApiServer(QObject):
    sig_state_changed = Signal(str)
    sig_listening = Signal(str)  # the base URL, http://127.0.0.1:PORT/v1
    sig_failed = Signal(str)

    def __init__(self, link: RuntimeLink, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self.state = STOPPED
        self.port = DEFAULT_PORT  # 0: any free port (the answer says which)
        self.url = ""
        self.wanted = False  # the user switched it on: after a runtime restart it is started again
        link.sig_ready.connect(self._on_runtime_ready)
        link.sig_crashed.connect(self._on_runtime_crashed)

    @property
    def key(self) -> str:
        return keys.load_or_create()

    @property
    def running(self) -> bool:
        return self.state in (STARTING, READY)

    def start(self, port: int | None = None) -> None:
        if self.wanted:
            return
        if port is not None:
            self.port = port
        self.wanted = True
        keys.load_or_create()  # the key exists before the first request can need it
        self._send_start()

    def stop(self) -> None:
        if not self.wanted:
            return
        self.wanted = False
        self.url = ""
        self.link.call(methods.API_STOP, None, on_result=lambda _r: self._set_state(STOPPED), on_error=lambda _e: self._set_state(STOPPED), timeout_ms=CALL_TIMEOUT_MS)

    def _send_start(self) -> None:
        self._set_state(STARTING)
        params = ApiStartParams(port=self.port, key_file=str(keys.key_path()))
        self.link.call(methods.API_START, params, on_result=self._on_started, on_error=self._on_start_failed, timeout_ms=CALL_TIMEOUT_MS)

    def _on_started(self, started: ApiStartResult) -> None:
        if not self.wanted:
            return  # switched off meanwhile: the api.stop behind it ends it
        self.port = started.port  # a restart of the runtime listens where clients already look
        self.url = started.url
        self._set_state(READY)
        self.sig_listening.emit(self.url)

    def _on_start_failed(self, error: RpcError) -> None:
        if not self.wanted or self.state != STARTING:
            return
        if error.code == ErrorCode.RUNTIME_DIED:
            return  # the runtime restarts; _on_runtime_ready starts the API again
        self.wanted = False
        self._set_state(FAILED)
        self.sig_failed.emit(self.tr("could not serve the API: {reason}").format(reason=error.message))

    def _on_runtime_crashed(self, _description: str) -> None:
        if self.wanted:
            self.url = ""
            self._set_state(STARTING)

    def _on_runtime_ready(self, _info) -> None:
        if self.wanted:
            self._send_start()

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.sig_state_changed.emit(state)
