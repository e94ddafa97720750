"""CatalogService: the hub and download methods of the runtime, as Qt signals with typed payloads.

Widgets call its methods and render what its signals carry; it holds no widget
and does no I/O of its own: every request goes through the RuntimeLink, whose
replies arrive on the GUI thread as callbacks.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

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
    ModelRef,
    RpcError,
    methods,
)

QUANTS_TIMEOUT_MS = 120_000
SEARCH_TIMEOUT_MS = 60_000


class CatalogService(QObject):
    sig_catalog = Signal(object)  # list[CatalogEntry]
    sig_search_results = Signal(str, object)  # query, list[HubRepo]
    sig_quants = Signal(object)  # HubQuantsResult
    sig_download = Signal(object)  # DownloadInfo, on every progress notification and reply
    sig_draft_check = Signal(str, str, object)  # target repo, draft repo, DraftCheckResult
    sig_error = Signal(str, str)  # what was being done, the runtime's message

    def __init__(self, link, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self._quants_repo: str | None = None
        link.sig_notification.connect(self._on_notification)

    # ---- requests ----------------------------------------------------------------
    def load_catalog(self) -> None:
        self.link.call(methods.HUB_CATALOG, None, self._on_catalog, self._error(self.tr("The catalog")))

    def search(self, query: str, limit: int = 30) -> None:
        self.link.call(
            methods.HUB_SEARCH, HubSearchParams(query, limit),
            lambda r: self._on_search(query, r),
            self._error(self.tr("Search for “{query}”").format(query=query)), SEARCH_TIMEOUT_MS,
        )

    def quants(self, repo: str, n_ctx: int = 4096, kv_type: str = "f16") -> None:
        self._quants_repo = repo

        def done(quants: HubQuantsResult) -> None:
            if quants.repo == self._quants_repo:  # an answer for a repository no longer shown is dropped
                self.sig_quants.emit(quants)

        self.link.call(methods.HUB_QUANTS, HubQuantsParams(repo, n_ctx=n_ctx, type_k=kv_type, type_v=kv_type), done, self._error(self.tr("Levels of {repo}").format(repo=repo)), QUANTS_TIMEOUT_MS)

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

    def _on_notification(self, _method: str, params: object) -> None:
        if isinstance(params, DownloadInfo):  # download.progress
            self.sig_download.emit(params)

    def _error(self, what: str):
        return lambda error: self.sig_error.emit(what, error.message if isinstance(error, RpcError) else str(error))
