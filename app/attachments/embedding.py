"""Offering the catalog's embedding model when a document is too large to fit and nothing can search it.

Until one is downloaded the chip's tooltip and this offer say why the file cannot be searched (only its
beginning reaches the model). The offer names the catalog's embedding entry (runtime/hub/catalog.json,
kind "embedding"); accepting starts its download like any other (the Downloads panel shows it).
"""

from __future__ import annotations

import logging
from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.runtime_link import RuntimeLink
from runtime.protocol import CatalogEntry, DownloadInfo, DownloadStartParams, HubCatalogResult, RpcError, methods

log = logging.getLogger("lokal.attachments")
# The catalog's small embedding model, if the catalog names none (an older catalog without `kind`).
FALLBACK = CatalogEntry("ggml-org/bge-small-en-v1.5-Q8_0-GGUF", "BGE small en v1.5", "bge", "33M", "Q8_0")
CATALOG_TIMEOUT_MS = 30_000


def embedding_entry(entries: list[CatalogEntry]) -> CatalogEntry:
    """The catalog's first embedding model (its smallest comes first), else FALLBACK."""
    for entry in entries:
        if getattr(entry, "kind", "") == "embedding":
            return entry
    return FALLBACK


class EmbeddingOffer(QObject):
    sig_entry = Signal(object)  # the CatalogEntry to offer, once the catalog answered
    sig_started = Signal(str)  # the download's name, once the runtime took it
    sig_problem = Signal(str)

    def __init__(self, link: RuntimeLink, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self.entry: CatalogEntry | None = None
        self.download_id = ""

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

        self.link.call(
            methods.DOWNLOAD_START, DownloadStartParams(entry.repo, entry.quant), started,
            lambda error: self.sig_problem.emit(self.tr("The download of {name} did not start: {reason}").format(name=entry.name, reason=error.message)),
            CATALOG_TIMEOUT_MS,
        )
