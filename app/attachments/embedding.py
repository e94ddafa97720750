"""The embedding model beside the chat model: offered when a document is too large to fit, loaded once it is there.

A document too large for the context is searched by its chunks' embeddings (runtime/documents); with no
embedding model loaded the runtime refuses to send it, and says so. The window then offers the catalog's
embedding entry (runtime/hub/catalog.json, kind "embedding"); once its download is done the file is
loaded into the runtime (`embedding.load`), remembered in the store, and loaded again whenever the
runtime starts (at the next start of Lokal, and after a crash).
"""

from __future__ import annotations

import logging
import os
from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.runtime_link import ConnectionState, RuntimeLink
from app.storage.store import Store, StoreUnavailable
from runtime.protocol import (
    CatalogEntry, DownloadInfo, DownloadStartParams, EmbeddingLoadParams, EmbeddingLoadResult, HubCatalogResult, RpcError, methods,
)

log = logging.getLogger("lokal.attachments")
# The catalog's small embedding model, if the catalog names none (an older catalog without `kind`).
FALLBACK = CatalogEntry("ggml-org/bge-small-en-v1.5-Q8_0-GGUF", "BGE small en v1.5", "bge", "33M", "Q8_0")
CATALOG_TIMEOUT_MS = 30_000
LOAD_TIMEOUT_MS = 120_000
STATE_KEY = "embedding_model"  # the store's state: the embedding model's file, loaded whenever the runtime starts


def embedding_entry(entries: list[CatalogEntry]) -> CatalogEntry:
    """The catalog's first embedding model (its smallest comes first), else FALLBACK."""
    for entry in entries:
        if getattr(entry, "kind", "") == "embedding":
            return entry
    return FALLBACK


class EmbeddingModel(QObject):
    sig_entry = Signal(object)  # the CatalogEntry to offer, once the catalog answered
    sig_started = Signal(str)  # the download's name, once the runtime took it
    sig_loaded = Signal(object)  # EmbeddingLoadResult: large documents can be searched from now on
    sig_problem = Signal(str)

    def __init__(self, link: RuntimeLink, store: Store, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self.store = store
        self.entry: CatalogEntry | None = None
        self.download_id = ""
        self.loaded: EmbeddingLoadResult | None = None
        self._asked_this_runtime = False  # the remembered model was loaded (or found missing) in the runtime running now
        link.sig_notification.connect(self._on_notification)
        link.sig_state_changed.connect(self.follow_runtime)

    # ---- the offer ------------------------------------------------------------------
    def find(self, then: Callable[[CatalogEntry], None] | None = None) -> None:
        def done(result: HubCatalogResult) -> None:
            self.entry = embedding_entry(result.entries)
            self.sig_entry.emit(self.entry)
            if then is not None:
                then(self.entry)

        def failed(error: RpcError) -> None:
            log.info("the catalog did not answer (%s): offering %s", error.message, FALLBACK.repo)
            done(HubCatalogResult([]))

        self.link.call(methods.HUB_CATALOG, None, done, failed, CATALOG_TIMEOUT_MS)

    def download(self, entry: CatalogEntry) -> None:
        def started(info: DownloadInfo) -> None:
            self.download_id = info.id
            self.sig_started.emit(entry.name)
            self._on_progress(info)  # already there: done at once

        self.link.call(
            methods.DOWNLOAD_START, DownloadStartParams(entry.repo, entry.quant), started,
            lambda error: self.sig_problem.emit(self.tr("The download of {name} did not start: {reason}").format(name=entry.name, reason=error.message)),
            CATALOG_TIMEOUT_MS,
        )

    def _on_notification(self, method: str, params: object) -> None:
        if method == methods.DOWNLOAD_PROGRESS.name and isinstance(params, DownloadInfo):
            self._on_progress(params)

    def _on_progress(self, info: DownloadInfo) -> None:
        if not self.download_id or info.id != self.download_id or info.state != "done":
            return
        self.download_id = ""
        path = next((p for p in info.paths if p.lower().endswith(".gguf")), None)
        if path is None:
            self.sig_problem.emit(self.tr("The download of {repo} has no GGUF file to load").format(repo=info.repo))
            return
        self.load(path)

    # ---- loading ----------------------------------------------------------------------
    def load(self, path: str) -> None:
        """Load `path` as the runtime's embedding model, and keep it for the next starts."""

        def done(result: EmbeddingLoadResult) -> None:
            self.loaded = result
            try:
                self.store.set_state(STATE_KEY, path)
            except StoreUnavailable as exc:
                log.warning("the embedding model was loaded but not remembered: %s", exc)
            self.sig_loaded.emit(result)

        def failed(error: RpcError) -> None:
            self.sig_problem.emit(self.tr("The embedding model {file} could not be loaded: {reason}").format(file=os.path.basename(path), reason=error.message))

        self.link.call(methods.EMBEDDING_LOAD, EmbeddingLoadParams(path), done, failed, LOAD_TIMEOUT_MS)

    def follow_runtime(self, state: ConnectionState) -> None:
        """A runtime that (re)started has no embedding model: the remembered one is loaded again."""
        if state in (ConnectionState.STARTING, ConnectionState.CRASHED, ConnectionState.RESTARTING, ConnectionState.STOPPED):
            self._asked_this_runtime = False  # the next runtime starts without one
            self.loaded = None
            return
        if state != ConnectionState.READY or self._asked_this_runtime:
            return
        self._asked_this_runtime = True
        try:
            path = self.store.get_state(STATE_KEY)
        except StoreUnavailable:
            return
        if path and os.path.exists(path):
            self.load(path)
