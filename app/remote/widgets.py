"""The widgets of remote endpoints. They render state and forward clicks; nothing more."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from app.remote.endpoint_model import EndpointError, normalize_base_url
from app.ui.accessibility import describe_buttons


class AddEndpointDialog(QDialog):
    """Name, base URL and key of an OpenAI-compatible server (vLLM, llama-server, Ollama, LM Studio, lokal serve)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Add remote endpoint"))
        self.name = QLineEdit()
        self.name.setPlaceholderText(self.tr("e.g. GPU cluster"))
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("http://127.0.0.1:8080/v1")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText(self.tr("API key (empty if the server needs none)"))
        self.base_url.setAccessibleDescription(self.tr("The address of an OpenAI-compatible server, such as http://127.0.0.1:8080/v1"))
        self.key.setAccessibleDescription(self.tr("The key the server expects; leave it empty if it needs none"))
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.hide()
        form = QFormLayout()
        form.addRow(self.tr("Name"), self.name)
        form.addRow(self.tr("Base URL"), self.base_url)
        form.addRow(self.tr("API key"), self.key)
        buttons = describe_buttons(QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel))
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
