"""CatalogService: the hub and download methods of the runtime, as Qt signals with typed payloads.

Widgets call its methods and render what its signals carry; it holds no widget
and does no I/O of its own: every request goes through the RuntimeLink, whose
replies arrive on the GUI thread as callbacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.runtime_link import RuntimeLink
from app.runtime_link.error_words import said

from runtime.protocol import (
    DownloadIdParams,
    DownloadInfo,
    DownloadListResult,
    DownloadStartParams,
    DraftCheckParams,
    DraftCheckResult,
    HubCatalogResult,
    HubQuantsParams,
    HubQuantsResult,
    HubSearchParams,
    HubSearchResult,
    KvType,
    ModelRef,
    RpcError,
    methods,
)

QUANTS_TIMEOUT_MS = 120_000
SEARCH_TIMEOUT_MS = 60_000


@dataclass
class PairDownload:
    """A model's download and its draft partner's, known by id once download.start answers."""

    repo: str
    draft_repo: str
    target_id: str = ""
    draft_id: str = ""


class CatalogService(QObject):
    sig_catalog = Signal(object)  # list[CatalogEntry]
    sig_search_results = Signal(str, object)  # query, list[HubRepo]
    sig_quants = Signal(object)  # HubQuantsResult
    sig_download = Signal(object)  # DownloadInfo, on every progress notification and reply
    sig_draft_check = Signal(str, str, object)  # target repo, draft repo, DraftCheckResult
    sig_error = Signal(str, str)  # what was being done, the runtime's message
    sig_pair_downloaded = Signal(object, object)  # a model and its draft, both downloaded: their snapshot paths (list[str] each)

    def __init__(self, link: RuntimeLink, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self._quants_asked = 0  # hub.quants requests sent: only the newest one's answer is shown
        self._pairs: list[PairDownload] = []  # downloads of a model with its draft, until both are done
        self._done: dict[str, list[str]] = {}  # the snapshot paths of every download seen done, by id
        link.sig_notification.connect(self._on_notification)
        self.sig_download.connect(self._on_download_seen)

    # ---- requests ----------------------------------------------------------------
    def load_catalog(self) -> None:
        self.link.call(methods.HUB_CATALOG, None, self._on_catalog, self._error(self.tr("The catalog")))

    def search(self, query: str, limit: int = 30) -> None:
        self.link.call(
            methods.HUB_SEARCH, HubSearchParams(query, limit),
            lambda r: self._on_search(query, r),
            self._error(self.tr("Search for “{query}”").format(query=query)), SEARCH_TIMEOUT_MS,
        )

    def quants(self, repo: str, n_ctx: int = 4096, kv_type: KvType = "f16", draft_repo: str | None = None) -> None:
        """The repository's levels with their fit; with `draft_repo`, each fit counts that draft partner too
        (downloaded and loaded with the level: "Download with its draft model")."""
        self._quants_asked += 1
        asked = self._quants_asked
        draft = ModelRef(repo=draft_repo) if draft_repo else None

        def done(quants: HubQuantsResult) -> None:
            if asked == self._quants_asked:  # an older request's answer (another repository, context or draft partner) is dropped
                self.sig_quants.emit(quants)

        self.link.call(methods.HUB_QUANTS, HubQuantsParams(repo, n_ctx=n_ctx, type_k=kv_type, type_v=kv_type, draft=draft), done, self._error(self.tr("Levels of {repo}").format(repo=repo)), QUANTS_TIMEOUT_MS)

    def draft_check(self, target_repo: str, draft_repo: str) -> None:
        """Whether `draft_repo` can draft for `target_repo`, from both GGUF headers (nothing is downloaded)."""
        params = DraftCheckParams(target=ModelRef(repo=target_repo), draft=ModelRef(repo=draft_repo))
        self.link.call(
            methods.HUB_DRAFT_CHECK, params,
            lambda r: self._on_draft_check(target_repo, draft_repo, r),
            self._error(self.tr("Draft check of {repo}").format(repo=draft_repo)), QUANTS_TIMEOUT_MS,
        )

    def start_download(self, repo: str, quant: str | None) -> None:
        self.link.call(methods.DOWNLOAD_START, DownloadStartParams(repo, quant), self._on_download_reply, self._error(self.tr("Download of {repo}").format(repo=repo)), QUANTS_TIMEOUT_MS)

    def start_download_with_draft(self, repo: str, quant: str | None, draft_repo: str) -> None:
        """Download a level and its repository's draft partner (the partner's recommended level, as the fit counted
        it), one download each; sig_pair_downloaded once both are done, to pair them."""
        pair = PairDownload(repo, draft_repo)
        self._pairs.append(pair)

        def started(role: str) -> Callable[[DownloadInfo], None]:
            def done(info: DownloadInfo) -> None:
                setattr(pair, role, info.id)
                self._on_download_reply(info)
                self._pair_if_done()
            return done

        for role, which, level in (("target_id", repo, quant), ("draft_id", draft_repo, None)):
            self.link.call(methods.DOWNLOAD_START, DownloadStartParams(which, level), started(role),
                           self._error(self.tr("Download of {repo}").format(repo=which)), QUANTS_TIMEOUT_MS)

    def pause(self, download_id: str) -> None:
        self.link.call(methods.DOWNLOAD_PAUSE, DownloadIdParams(download_id), self._on_download_reply, self._error(self.tr("Pause")))

    def resume(self, download_id: str) -> None:
        self.link.call(methods.DOWNLOAD_RESUME, DownloadIdParams(download_id), self._on_download_reply, self._error(self.tr("Resume")))

    def cancel(self, download_id: str) -> None:
        self.link.call(methods.DOWNLOAD_CANCEL, DownloadIdParams(download_id), self._on_download_reply, self._error(self.tr("Cancel")))

    def refresh_downloads(self) -> None:
        def done(result: DownloadListResult) -> None:
            for info in result.downloads:
                self.sig_download.emit(info)

        self.link.call(methods.DOWNLOAD_LIST, None, done, self._error(self.tr("Downloads")))

    # ---- replies -------------------------------------------------------------------
    def _on_catalog(self, result: HubCatalogResult) -> None:
        self.sig_catalog.emit(result.entries)

    def _on_search(self, query: str, result: HubSearchResult) -> None:
        self.sig_search_results.emit(query, result.repos)

    def _on_draft_check(self, target_repo: str, draft_repo: str, result: DraftCheckResult) -> None:
        self.sig_draft_check.emit(target_repo, draft_repo, result)

    def _on_download_reply(self, info: DownloadInfo) -> None:
        self.sig_download.emit(info)

    def _on_download_seen(self, info: DownloadInfo) -> None:
        if info.state == "done" and info.id not in self._done:
            self._done[info.id] = list(info.paths)
            self._pair_if_done()

    def _pair_if_done(self) -> None:
        # By id, from whichever came first: a small file's "done" notification can arrive before download.start's reply.
        for pair in [p for p in self._pairs if p.target_id in self._done and p.draft_id in self._done]:
            self._pairs.remove(pair)
            self.sig_pair_downloaded.emit(self._done[pair.target_id], self._done[pair.draft_id])

    def _on_notification(self, _method: str, params: object) -> None:
        if isinstance(params, DownloadInfo):  # download.progress
            self.sig_download.emit(params)

    def _error(self, what: str) -> Callable[[RpcError], None]:
        return lambda error: self.sig_error.emit(what, said(error) if isinstance(error, RpcError) else str(error))
