"""RemoteMode: remote endpoints, their models and the chosen one, for the window.

No widgets here: the window's menu and dialogs call it, and it tells them what
changed through signals.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.remote.chat_link import RemoteChatLink
from app.remote.client import RemoteClient
from app.remote.endpoint_model import Endpoint, EndpointList, RemoteModel, RemoteModelList


class RemoteMode(QObject):
    sig_models_changed = Signal()
    sig_chosen = Signal(object)  # RemoteModel | None (None: back to the local runtime)
    sig_error = Signal(str)

    def __init__(self, endpoints: EndpointList | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.endpoints = endpoints or EndpointList(parent=self)
        self.models = RemoteModelList(self)
        self.client = RemoteClient(self)
        self.chat_link = RemoteChatLink(self.client, lambda model: self.endpoints.key_for(model.endpoint), self)
        self.client.sig_models.connect(self._on_models)
        self.client.sig_models_failed.connect(self._on_models_failed)

    @property
    def chosen(self) -> RemoteModel | None:
        return self.chat_link.model

    def refresh(self) -> None:
        """Ask every endpoint for its models again (the answers come as signals)."""
        keys = self.endpoints.keys
        for endpoint in self.endpoints.endpoints:
            self.client.list_models(endpoint, self.endpoints.key_for(endpoint))
        if keys.read_problem:
            self.sig_error.emit(keys.read_problem)
            keys.read_problem = None

    def add_endpoint(self, name: str, base_url: str, key: str, key_in_clear_accepted: bool = False) -> Endpoint:
        endpoint = self.endpoints.add(name, base_url, key, key_in_clear_accepted)
        self.client.list_models(endpoint, self.endpoints.key_for(endpoint))
        return endpoint

    def choose(self, model: RemoteModel | None) -> None:
        self.chat_link.model = model
        self.sig_chosen.emit(model)

    def _on_models(self, endpoint: Endpoint, ids: list[str]) -> None:
        self.models.set_models(endpoint, [str(i) for i in ids])
        self.sig_models_changed.emit()

    def _on_models_failed(self, endpoint: Endpoint, message: str) -> None:
        self.sig_error.emit(f"{endpoint.name}: {message}")
