"""The API panel: the toggle that serves the API, and the URL and key to give to a client. It renders ApiServer's state."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from app.api.server import FAILED, READY, STARTING, ApiServer

class ApiPanel(QWidget):
    """The toggle that serves the API, and the URL and key to give to a client."""

    sig_toggled = Signal(bool)

    def __init__(self, server: ApiServer, parent: QWidget | None = None):
        super().__init__(parent)
        self.server = server
        self.toggle = QPushButton(self.tr("Serve the API"))
        self.toggle.setCheckable(True)
        self.toggle.setAccessibleDescription(self.tr("Serve the loaded model to other programs over an OpenAI-compatible API on this machine"))
        self.toggle.toggled.connect(self.sig_toggled)
        self.status = QLabel(self.tr("Off"))
        self.url = QLineEdit()
        self.url.setReadOnly(True)
        self.key = QLineEdit()
        self.key.setReadOnly(True)
        self.key.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        self.url.setAccessibleDescription(self.tr("The base URL to give to a client"))
        self.key.setAccessibleDescription(self.tr("The key a client sends as its bearer token"))
        row = QHBoxLayout()
        row.addWidget(self.toggle)
        row.addWidget(self.status, 1)
        form = QFormLayout()
        form.addRow(self.tr("URL"), self.url)
        form.addRow(self.tr("Key"), self.key)
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
            self.status.setText({STARTING: self.tr("Starting…"), READY: self.tr("Serving")}.get(state, self.tr("Off")))
        if not running:
            self.url.clear()
            self.key.clear()
