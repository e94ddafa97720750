"""The widgets of remote endpoints. They render state and forward clicks; nothing more."""

from __future__ import annotations

from urllib.parse import urlsplit

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QMessageBox, QVBoxLayout, QWidget

from app.remote.endpoint_model import EndpointError, key_in_clear, normalize_base_url
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
        self.key_in_clear_accepted = False
        self.warning: QMessageBox | None = None  # the question before a key goes out over http://

    def _on_accept(self) -> None:
        try:
            url = normalize_base_url(self.base_url.text())
        except EndpointError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        if self.key.text().strip() and key_in_clear(url):
            self._warn_key_in_clear(url)
            return
        self.accept()

    def _warn_key_in_clear(self, url: str) -> None:
        host = urlsplit(url).hostname
        box = QMessageBox(QMessageBox.Icon.Warning, self.tr("Key sent unencrypted"), self.tr("{host} is reached over http://, so the API key would cross the network unencrypted.").format(host=host), parent=self)
        box.setInformativeText(self.tr("Anyone on the way can read it, and the conversation too. Use https:// if the server offers it."))
        send = box.addButton(self.tr("Send over http://"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(lambda button: self._on_warning_answered(button is send))
        self.warning = box
        box.open()

    def _on_warning_answered(self, send: bool) -> None:
        if send:
            self.key_in_clear_accepted = True
            self.accept()

    def values(self) -> tuple[str, str, str, bool]:
        """Name, base URL, key, and whether the person accepted sending that key over http://."""
        return self.name.text(), self.base_url.text(), self.key.text(), self.key_in_clear_accepted


class KeyStorageQuestion(QMessageBox):
    """The keyring could not keep a key: store it in a file only the user can read, or not at all."""

    sig_answered = Signal(bool)  # True: in the file

    def __init__(self, endpoint_name: str, problem: str, file: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle(self.tr("API key not in the keyring"))
        self.setText(self.tr("The key for {name} could not be stored in the system keyring: {problem}.").format(name=endpoint_name, problem=problem))
        self.setInformativeText(self.tr("Store it in {file}, a file only you can read (mode 0600)? If not, Lokal uses it until it quits and keeps it nowhere.").format(file=file))
        self.file_button = self.addButton(self.tr("Store in the file"), QMessageBox.ButtonRole.AcceptRole)
        self.nowhere_button = self.addButton(self.tr("Don't store it"), QMessageBox.ButtonRole.RejectRole)
        self.buttonClicked.connect(lambda button: self.sig_answered.emit(button is self.file_button))
