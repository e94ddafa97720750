"""The runtime's hub methods: catalog, search, quantization levels with fit labels, draft
compatibility and downloads (the models on disk are runtime/models/service.py's).

None of these touch the engine, so none takes the engine's job slot. Those
that wait on the network run on the server's small pool (their lane in
runtime.protocol.methods), so the reader thread stays free for chat.cancel and
metrics; downloads run on their own threads and report with
`download.progress` notifications.

The hub client (huggingface_hub's API and its HTTP stack: runtime/hub/hf.py, downloads.py, remote_gguf.py,
repo.py, errors.py) is imported by the methods that go to the network, not with this module: about 0.2 s and
20 MB that every runtime start paid (tests/runtime/test_runtime_start_imports.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from runtime.dispatch import DispatchTable
from runtime.llama.devices import list_devices
from runtime.llama.memory import available_ram, estimate_load, with_projector
from runtime.gguf.reader import GGUFError, GGUFHeader, read_file_header
from runtime.hub import catalog, fit
from runtime.hub.cache_folder import cache_dir, repo_folder
from runtime.hub.quants import find_level, incomplete_split, pick_projector
from runtime.protocol import (
    DownloadListResult,
    DraftCheckParams,
    DraftCheckResult,
    Empty,
    ErrorCode,
    HubCatalogResult,
    HubQuantsParams,
    HubQuantsResult,
    HubRepo,
    HubSearchParams,
    HubSearchResult,
    ModelRef,
    QuantLevel,
    RpcError,
    methods,
)
from runtime.speculative.compat import incompatibilities

if TYPE_CHECKING:
    from runtime.hub.downloads import DownloadManager

MAX_SEARCH_RESULTS = 100


class HubService:
    def __init__(self, notify: Callable[[str, Any], None], cache_dir: Path | None = None):
        self._notify = notify
        self._cache_dir = cache_dir
        self._downloads: DownloadManager | None = None

    @property
    def downloads(self) -> DownloadManager:
        if self._downloads is None:  # created on first use: it reads saved downloads from disk
            from runtime.hub.downloads import DownloadManager

            self._downloads = DownloadManager(lambda info: self._notify("download.progress", info), cache_dir=self._cache_dir)
        return self._downloads

    def register(self, table: DispatchTable) -> None:
        table.handle(methods.HUB_CATALOG, self.catalog)
        table.handle(methods.HUB_SEARCH, self.search)
        table.handle(methods.HUB_QUANTS, self.quants)
        table.handle(methods.HUB_DRAFT_CHECK, self.draft_check)
        table.handle(methods.DOWNLOAD_START, lambda p: self.downloads.start(p))
        table.handle(methods.DOWNLOAD_PAUSE, lambda p: self.downloads.pause(p.id))
        table.handle(methods.DOWNLOAD_RESUME, lambda p: self.downloads.resume(p.id))
        table.handle(methods.DOWNLOAD_CANCEL, lambda p: self.downloads.cancel(p.id))
        table.handle(methods.DOWNLOAD_LIST, lambda _p: DownloadListResult(self.downloads.list()))

    def close(self) -> None:
        if self._downloads is not None:
            self._downloads.close()

    # ---- catalog and search ------------------------------------------------
    def catalog(self, _params: Empty) -> HubCatalogResult:
        current = catalog.read()
        return HubCatalogResult(current.entries, version=current.version)

    def search(self, params: HubSearchParams) -> HubSearchResult:
        if not 1 <= params.limit <= MAX_SEARCH_RESULTS:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.limit: must be between 1 and {MAX_SEARCH_RESULTS}")
        from runtime.hub import hf
        from runtime.hub.errors import from_exception

        try:
            found = hf.api().list_models(search=params.query or None, filter="gguf", sort="downloads", limit=params.limit)
            repos = [
                HubRepo(id=m.id, downloads=int(m.downloads or 0), likes=int(m.likes or 0), gated=bool(m.gated), last_modified=str(m.last_modified or ""))
                for m in found
            ]
        except Exception as exc:
            raise from_exception(exc, f"search {params.query!r}", hf.token() is not None) from None
        return HubSearchResult(repos)

    # ---- quantization levels with fit labels ----------------------------------
    def quants(self, params: HubQuantsParams) -> HubQuantsResult:
        if params.n_ctx < 16:
            raise RpcError(ErrorCode.INVALID_PARAMS, "params.n_ctx: must be at least 16")
        from runtime.hub import hf
        from runtime.hub.errors import from_exception
        from runtime.hub.remote_gguf import fetch_header
        from runtime.hub.repo import list_repo

        listing = list_repo(params.repo, params.revision)
        levels = listing.levels
        result = HubQuantsResult(repo=params.repo, commit=listing.commit, levels=[])
        header = None
        probe = find_level([lv for lv in levels if not incomplete_split(lv)], None)
        if params.read_header and probe is not None:
            # Levels of one repository share the architecture and tokenizer: one header serves them all.
            url = hf.file_url(params.repo, probe.first.path, listing.commit)
            try:
                header, stream = fetch_header(url)
            except Exception as exc:
                raise from_exception(exc, f"{params.repo}/{probe.first.path}", hf.token() is not None) from None
            result.header = fit.summarize(header)
            result.header_file = probe.first.path
            result.header_bytes_fetched = stream.fetched
        draft, draft_problem = self._draft_for_fit(params)
        devices = list_devices()
        ram = available_ram()
        result.ram_available = ram
        result.gpu_free = sum(d.memory_free for d in devices if d.type in ("gpu", "igpu"))
        downloaded = self._downloaded_blobs(params.repo)
        # A vision model's projector comes with every level (download.start adds it), so each fit counts it too.
        entry = catalog.read().entry(params.repo)
        projector = pick_projector(listing.files, entry.mmproj if entry else None)
        for lv in levels:
            level = QuantLevel(name=lv.name, files=[f.path for f in lv.files], size=lv.size, sha256=[f.sha256 for f in lv.files], problem=incomplete_split(lv))
            level.downloaded = all(f.sha256 in downloaded for f in [*lv.files, *([projector] if projector else [])])
            if projector is not None:
                level.mmproj, level.mmproj_size = projector.path, projector.size
            if header is not None:
                if lv is probe and len(lv.files) == 1:
                    estimate = estimate_load(header, params.n_ctx, params.type_k, params.type_v)
                else:
                    estimate = fit.estimate_for_size(header, lv.size, len(lv.files), params.n_ctx, params.type_k, params.type_v)
                if draft is not None:  # downloaded and loaded with it: the two must fit together
                    estimate = fit.together(estimate, estimate_load(draft, params.n_ctx, params.type_k, params.type_v))
                if projector is not None:
                    estimate = with_projector(estimate, projector.size)
                level.fit = fit.judge(estimate, devices, ram)
                if projector is not None:
                    level.fit.detail += f"; with the vision projector {projector.path} ({projector.size / fit.GiB:.2f} GiB) counted in"
                if draft is not None:
                    level.fit.draft = draft.name or "partner"
                    level.fit.detail += f"; with the draft model {level.fit.draft} counted in"
                elif draft_problem:
                    level.fit.draft_unknown = draft_problem
                    level.fit.detail += f"; without the draft model, whose size is unknown: {draft_problem}"
            result.levels.append(level)
        return result

    def _draft_for_fit(self, params: HubQuantsParams) -> tuple[GGUFHeader | None, str]:
        """The header of the draft model the levels are judged with (None if none is asked), or why it cannot be
        read: the levels are still listed and judged alone, saying so, rather than failing for the partner."""
        if params.draft is None or not params.read_header:
            return None, ""
        try:
            return self._header_of(params.draft), ""
        except RpcError as exc:
            return None, exc.message

    def _downloaded_blobs(self, repo: str) -> set[str]:
        blobs = repo_folder(self._cache_dir or cache_dir(), repo) / "blobs"
        return {p.name for p in blobs.glob("*") if not p.name.endswith(".incomplete")} if blobs.is_dir() else set()

    # ---- draft compatibility ---------------------------------------------------
    def draft_check(self, params: DraftCheckParams) -> DraftCheckResult:
        target = self._header_of(params.target)
        candidate = self._header_of(params.draft)
        reasons = incompatibilities(target, candidate)
        return DraftCheckResult(compatible=not reasons, reasons=reasons, target=fit.summarize(target), draft=fit.summarize(candidate))

    def _header_of(self, ref: ModelRef) -> GGUFHeader:
        if ref.path:
            try:
                return read_file_header(ref.path)
            except FileNotFoundError:
                raise RpcError(ErrorCode.MODEL_NOT_FOUND, f"model file not found: {ref.path}", {"path": ref.path}) from None
            except (GGUFError, OSError) as exc:
                raise RpcError(ErrorCode.INVALID_MODEL, f"{ref.path} is not a usable GGUF model: {exc}", {"path": ref.path}) from None
        if not ref.repo:
            raise RpcError(ErrorCode.INVALID_PARAMS, "a model reference needs a path or a repo")
        from runtime.hub import hf
        from runtime.hub.errors import from_exception
        from runtime.hub.remote_gguf import fetch_header
        from runtime.hub.repo import list_repo

        listing = list_repo(ref.repo, ref.revision)
        if ref.file:
            filename = ref.file
        else:
            level = find_level(listing.levels, ref.quant)
            if level is None:
                raise RpcError(ErrorCode.FILE_NOT_FOUND, f"no quantization {ref.quant or 'GGUF'} in {ref.repo}", {"repo": ref.repo})
            filename = level.first.path
        try:
            header, _stream = fetch_header(hf.file_url(ref.repo, filename, listing.commit))
        except RpcError:
            raise
        except Exception as exc:
            raise from_exception(exc, f"{ref.repo}/{filename}", hf.token() is not None) from None
        return header
