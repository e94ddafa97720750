"""The remote endpoints the user added, and the models each one serves, as Qt list models."""

from __future__ import annotations

import ipaddress
import json
import logging
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal

from app.remote.keystore import KeyStore
from app.ui.language import Context
from runtime.paths import config_dir

log = logging.getLogger("lokal.remote")

ENDPOINTS_FILE = "remote-endpoints.json"

EndpointRole = Qt.ItemDataRole.UserRole + 1
ModelIdRole = Qt.ItemDataRole.UserRole + 2


Endpoints = Context("Endpoints")


class EndpointError(ValueError):
    pass


def is_loopback(host: str) -> bool:
    """This machine itself: localhost (and *.localhost), 127.0.0.0/8, ::1."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def key_in_clear(base_url: str) -> bool:
    """Whether a key sent to this URL would cross the network unencrypted: http:// to a host that is not this machine."""
    parts = urlsplit(base_url)
    return parts.scheme == "http" and not is_loopback(parts.hostname or "")


def normalize_base_url(url: str) -> str:
    """'localhost:8080', 'http://host:8080' and 'http://host:8080/v1/' all become 'http://host:8080/v1'.

    Without a scheme only this machine's addresses get http://: for another host the person says
    which, since over http:// the key and the conversation can be read on the way.
    """
    url = url.strip()
    if not url:
        raise EndpointError(Endpoints.tr("enter the server's address, such as http://127.0.0.1:8080/v1"))
    if "://" not in url:
        host = urlsplit("//" + url).hostname or ""
        if not is_loopback(host):
            raise EndpointError(f"type https:// or http:// before {url}: over http:// the key and the conversation can be read on the way")
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointError(Endpoints.tr("not an http(s) address: {url}").format(url=url))
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise EndpointError(Endpoints.tr("bad port in {url}").format(url=url)) from None
    path = parts.path.rstrip("/")
    if not path:
        path = "/v1"  # where every OpenAI-compatible server (vLLM, llama-server, Ollama, LM Studio) puts its API
    return f"{parts.scheme}://{parts.netloc}{path}"


@dataclass(frozen=True)
class Endpoint:
    id: str
    name: str
    base_url: str
    key_in_clear_accepted: bool = False  # the person was warned that the key goes over http:// to another machine, and went on


@dataclass(frozen=True)
class RemoteModel:
    endpoint: Endpoint
    model_id: str

    @property
    def label(self) -> str:
        return f"{self.model_id}  ({self.endpoint.name})"


class EndpointList(QAbstractListModel):
    """The endpoints, saved to a JSON file (without keys: those live in the KeyStore)."""

    sig_changed = Signal()
    sig_key_not_stored = Signal(object, str)  # Endpoint, why the keyring could not keep its key (kept for this session)

    def __init__(self, keys: KeyStore | None = None, file: Path | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.keys = keys or KeyStore()
        self.file = file or config_dir() / ENDPOINTS_FILE
        self.endpoints: list[Endpoint] = self._load()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.endpoints)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.endpoints):
            return None
        endpoint = self.endpoints[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return endpoint.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return endpoint.base_url
        if role == EndpointRole:
            return endpoint
        return None

    def add(self, name: str, base_url: str, key: str, key_in_clear_accepted: bool = False) -> Endpoint:
        """Add an endpoint and store its key (the KeyStore says through sig_key_not_stored if the keyring could not).

        A key for http:// to another machine is refused unless the person accepted the warning.
        """
        url = normalize_base_url(base_url)
        key = key.strip()
        if key and key_in_clear(url) and not key_in_clear_accepted:
            raise EndpointError(f"the key would be sent unencrypted to {urlsplit(url).hostname}: use https://, or accept the warning first")
        endpoint = Endpoint(uuid.uuid4().hex, name.strip() or urlsplit(url).netloc, url, bool(key and key_in_clear_accepted))
        problem = self.keys.set(endpoint.id, key) if key else None
        row = len(self.endpoints)
        self.beginInsertRows(QModelIndex(), row, row)
        self.endpoints.append(endpoint)
        self.endInsertRows()
        self._save()
        self.sig_changed.emit()
        if problem:
            self.sig_key_not_stored.emit(endpoint, problem)
        return endpoint

    def store_key_in_file(self, endpoint: Endpoint) -> None:
        """The person's answer where the keyring failed: keep this endpoint's key in the 0600 key file."""
        self.keys.set_in_file(endpoint.id, self.keys.get(endpoint.id))

    def remove(self, endpoint_id: str) -> None:
        for row, endpoint in enumerate(self.endpoints):
            if endpoint.id == endpoint_id:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.endpoints[row]
                self.endRemoveRows()
                self.keys.delete(endpoint_id)
                self._save()
                self.sig_changed.emit()
                return

    def key_for(self, endpoint: Endpoint) -> str:
        if key_in_clear(endpoint.base_url) and not endpoint.key_in_clear_accepted:
            log.warning("not sending the key of %s over http:// without the warning accepted", endpoint.name)
            return ""  # an endpoint saved before the warning existed: its key is never sent in the clear unasked
        return self.keys.get(endpoint.id)

    def _load(self) -> list[Endpoint]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return []
        out = []
        for item in data if isinstance(data, list) else []:
            try:
                out.append(Endpoint(str(item["id"]), str(item["name"]), normalize_base_url(str(item["base_url"])), item.get("key_in_clear_accepted") is True))
            except (KeyError, TypeError, EndpointError):
                continue  # one damaged entry does not lose the others
        return out

    def _save(self) -> None:
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(json.dumps([asdict(e) for e in self.endpoints], indent=1), encoding="utf-8")
        tmp.replace(self.file)


class RemoteModelList(QAbstractListModel):
    """Every model of every endpoint, as the endpoints last listed them; what the model menu shows."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.models: list[RemoteModel] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.models)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.models):
            return None
        model = self.models[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return model.label
        if role == ModelIdRole:
            return model
        return None

    def set_models(self, endpoint: Endpoint, model_ids: list[str]) -> None:
        """Replace the models of one endpoint (the others stay)."""
        self.beginResetModel()
        self.models = [m for m in self.models if m.endpoint.id != endpoint.id] + [RemoteModel(endpoint, mid) for mid in model_ids]
        self.endResetModel()

    def drop_endpoint(self, endpoint_id: str) -> None:
        self.beginResetModel()
        self.models = [m for m in self.models if m.endpoint.id != endpoint_id]
        self.endResetModel()
