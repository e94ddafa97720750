"""The widgets of remote endpoints and the local API. They render state and forward clicks; nothing more."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QMenu, QPushButton, QVBoxLayout, QWidget,
)

from app.remote.endpoints import EndpointError, RemoteModel, RemoteModelList, normalize_base_url
from app.remote.serve import FAILED, READY, STARTING, ApiServer


class AddEndpointDialog(QDialog):
    """Name, base URL and key of an OpenAI-compatible server (vLLM, llama-server, Ollama, LM Studio, lokal serve)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Add remote endpoint")
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. GPU cluster")
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("http://127.0.0.1:8080/v1")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("API key (empty if the server needs none)")
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.hide()
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Base URL", self.base_url)
        form.addRow("API key", self.key)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._on_accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _on_accept(self) -> None:
        try:
            normalize_base_url(self.base_url.text())
        except EndpointError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.accept()

    def values(self) -> tuple[str, str, str]:
        return self.name.text(), self.base_url.text(), self.key.text()


STATE_TEXT = {STARTING: "Starting…", READY: "Serving", FAILED: "Failed"}


class ApiPanel(QWidget):
    """The toggle that serves the API, and the URL and key to give to a client."""

    sig_toggled = Signal(bool)

    def __init__(self, server: ApiServer, parent: QWidget | None = None):
        super().__init__(parent)
        self.server = server
        self.toggle = QPushButton("Serve the API")
        self.toggle.setCheckable(True)
        self.toggle.toggled.connect(self.sig_toggled)
        self.status = QLabel("Off")
        self.url = QLineEdit()
        self.url.setReadOnly(True)
        self.key = QLineEdit()
        self.key.setReadOnly(True)
        self.key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        row = QHBoxLayout()
        row.addWidget(self.toggle)
        row.addWidget(self.status, 1)
        form = QFormLayout()
        form.addRow("URL", self.url)
        form.addRow("Key", self.key)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addLayout(form)
        server.sig_state_changed.connect(self._on_state_changed)
        server.sig_listening.connect(self._on_listening)
        server.sig_failed.connect(lambda message: self.status.setText(message.splitlines()[0]))
        self._on_state_changed(server.state)

    def _on_listening(self, url: str) -> None:
        self.url.setText(url)
        self.key.setText(self.server.key)

    def _on_state_changed(self, state: str) -> None:
        running = state in (STARTING, READY)
        self.toggle.blockSignals(True)
        self.toggle.setChecked(running)
        self.toggle.blockSignals(False)
        if state != FAILED:
            self.status.setText(STATE_TEXT.get(state, "Off"))
        if not running:
            self.url.clear()
            self.key.clear()


def add_remote_section(menu: QMenu, models: RemoteModelList, chosen: RemoteModel | None, on_chosen, on_add) -> None:
    """The model menu's remote part: every remote model, then "Add remote endpoint…"."""
    menu.addSection("Remote")
    for model in models.models:
        action = menu.addAction(model.label)
        action.setCheckable(True)
        action.setChecked(chosen == model)
        action.setToolTip(model.endpoint.base_url)
        action.triggered.connect(lambda _c=False, m=model: on_chosen(m))
    menu.addAction("Add remote endpoint…", on_add)
