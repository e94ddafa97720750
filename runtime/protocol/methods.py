"""Every method's params, result and lane, and every notification's message, tied to their names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.protocol.api import ApiStartParams, ApiStartResult, ApiStopResult
from runtime.protocol.chat import ChatCancelParams, ChatCancelResult, ChatDelta, ChatGenerateParams, ChatGenerateResult
from runtime.protocol.codec import decode
from runtime.protocol.hub import (
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
)
from runtime.protocol.kv import KvClearResult, KvStoreInfo, KvStoreInfoParams
from runtime.protocol.lanes import Lane
from runtime.protocol.local_models import LocalModel, ModelsAddParams, ModelsListResult, ModelsRemoveParams, ModelsRemoveResult
from runtime.protocol.metrics import MetricsParams, MetricsResult
from runtime.protocol.model import ModelLoadParams, ModelLoadResult, ModelProgress, ModelUnloadResult
from runtime.protocol.session import Empty, InitializeParams, InitializeResult, JobWaiting, ShutdownResult


@dataclass(frozen=True)
class Method:
    params: type
    result: type
    lane: Lane = Lane.IMMEDIATE


ENGINE, BATCH, POOL = Lane.ENGINE, Lane.BATCH, Lane.POOL

METHODS: dict[str, Method] = {
    "initialize": Method(InitializeParams, InitializeResult),
    "model.load": Method(ModelLoadParams, ModelLoadResult, ENGINE),
    "model.unload": Method(Empty, ModelUnloadResult, ENGINE),
    "chat.generate": Method(ChatGenerateParams, ChatGenerateResult, BATCH),
    "chat.cancel": Method(ChatCancelParams, ChatCancelResult),
    "runtime.metrics": Method(MetricsParams, MetricsResult),
    "shutdown": Method(Empty, ShutdownResult),
    "hub.catalog": Method(Empty, HubCatalogResult),
    "hub.search": Method(HubSearchParams, HubSearchResult, POOL),
    "hub.quants": Method(HubQuantsParams, HubQuantsResult, POOL),
    "hub.draft_check": Method(DraftCheckParams, DraftCheckResult, POOL),
    "download.start": Method(DownloadStartParams, DownloadInfo, POOL),
    "download.pause": Method(DownloadIdParams, DownloadInfo, POOL),
    "download.resume": Method(DownloadIdParams, DownloadInfo),
    "download.cancel": Method(DownloadIdParams, DownloadInfo, POOL),
    "download.list": Method(Empty, DownloadListResult),
    "models.list": Method(Empty, ModelsListResult, POOL),
    "models.add": Method(ModelsAddParams, LocalModel, POOL),
    "models.remove": Method(ModelsRemoveParams, ModelsRemoveResult, POOL),
    # kv.store_info's wait_for_writes blocks the reader for up to 30 s: for tools and tests (KvStoreInfoParams).
    "kv.store_info": Method(KvStoreInfoParams, KvStoreInfo),
    "kv.clear": Method(Empty, KvClearResult),
    "api.start": Method(ApiStartParams, ApiStartResult, POOL),  # starting or stopping a listener may take a moment
    "api.stop": Method(Empty, ApiStopResult, POOL),
}

NOTIFICATIONS: dict[str, type] = {
    "chat.delta": ChatDelta,
    "model.progress": ModelProgress,
    "download.progress": DownloadInfo,
    "job.waiting": JobWaiting,
}


def decode_result(method: str, data: Any) -> Any:
    """A method's result as its dataclass (METHODS), decoded once where the answer arrives; INVALID_PARAMS naming a bad field."""
    return decode(METHODS[method].result, data, "result")


def params_for(method: str, params: Any) -> Any:
    """Check that `params` is `method`'s params dataclass (None: its defaults, for methods that take none)."""
    spec = METHODS.get(method)
    if spec is None:
        raise ValueError(f"unknown method {method!r}")
    if params is None:
        params = spec.params()
    if not isinstance(params, spec.params):
        raise TypeError(f"{method} takes {spec.params.__name__}, not {type(params).__name__}")
    return params
