"""Every method as a typed handle, `Method[P, R]`: its name, params dataclass P, result dataclass R and lane.

Clients call `link.call(methods.CHAT_GENERATE, params)` rather than a method name, so the type checker
knows the params a method takes and the result its callback gets: a misspelt method, a wrong params
dataclass or a callback that expects another result fails mypy, not the user (Anki's generated backend
methods do the same for its core). The runtime's dispatch table is keyed by the same handles
(runtime/dispatch.py), so a method with no handler is found when the server starts. Notifications are
typed the same way, `Topic[T]`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from runtime.protocol.attachments import AttachmentAddParams, AttachmentInfo, AttachmentProgress
from runtime.protocol.embeddings import EmbeddingLoadParams, EmbeddingLoadResult, EmbeddingUnloadResult
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
from runtime.protocol.model import CountTokensParams, CountTokensResult, ModelLoadParams, ModelLoadResult, ModelProgress, ModelUnloadResult
from runtime.protocol.session import Empty, InitializeParams, InitializeResult, JobWaiting, ShutdownResult


P = TypeVar("P")
R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True)
class Method(Generic[P, R]):
    """One JSON-RPC method: a request with params P gets a result R; `lane` says where the runtime runs it."""

    name: str
    params: type[P]
    result: type[R]
    lane: Lane = Lane.IMMEDIATE

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Topic(Generic[T]):
    """One notification: its name and the dataclass its params are."""

    name: str
    params: type[T]

    def __str__(self) -> str:
        return self.name


ENGINE, BATCH, POOL = Lane.ENGINE, Lane.BATCH, Lane.POOL

INITIALIZE = Method("initialize", InitializeParams, InitializeResult)
SHUTDOWN = Method("shutdown", Empty, ShutdownResult)
MODEL_LOAD = Method("model.load", ModelLoadParams, ModelLoadResult, ENGINE)
MODEL_UNLOAD = Method("model.unload", Empty, ModelUnloadResult, ENGINE)
MODEL_COUNT_TOKENS = Method("model.count_tokens", CountTokensParams, CountTokensResult, POOL)  # waits out a load, never a reply
CHAT_GENERATE = Method("chat.generate", ChatGenerateParams, ChatGenerateResult, BATCH)
CHAT_CANCEL = Method("chat.cancel", ChatCancelParams, ChatCancelResult)
RUNTIME_METRICS = Method("runtime.metrics", MetricsParams, MetricsResult)
HUB_CATALOG = Method("hub.catalog", Empty, HubCatalogResult)
HUB_SEARCH = Method("hub.search", HubSearchParams, HubSearchResult, POOL)
HUB_QUANTS = Method("hub.quants", HubQuantsParams, HubQuantsResult, POOL)
HUB_DRAFT_CHECK = Method("hub.draft_check", DraftCheckParams, DraftCheckResult, POOL)
DOWNLOAD_START = Method("download.start", DownloadStartParams, DownloadInfo, POOL)
DOWNLOAD_PAUSE = Method("download.pause", DownloadIdParams, DownloadInfo, POOL)
DOWNLOAD_RESUME = Method("download.resume", DownloadIdParams, DownloadInfo)
DOWNLOAD_CANCEL = Method("download.cancel", DownloadIdParams, DownloadInfo, POOL)
DOWNLOAD_LIST = Method("download.list", Empty, DownloadListResult)
MODELS_LIST = Method("models.list", Empty, ModelsListResult, POOL)
MODELS_ADD = Method("models.add", ModelsAddParams, LocalModel, POOL)
MODELS_REMOVE = Method("models.remove", ModelsRemoveParams, ModelsRemoveResult, POOL)
# kv.store_info's wait_for_writes blocks the reader for up to 30 s: for tools and tests (KvStoreInfoParams).
KV_STORE_INFO = Method("kv.store_info", KvStoreInfoParams, KvStoreInfo)
KV_CLEAR = Method("kv.clear", Empty, KvClearResult)
API_START = Method("api.start", ApiStartParams, ApiStartResult, POOL)  # starting or stopping a listener may take a moment
API_STOP = Method("api.stop", Empty, ApiStopResult, POOL)
EMBEDDING_LOAD = Method("embedding.load", EmbeddingLoadParams, EmbeddingLoadResult, POOL)
EMBEDDING_UNLOAD = Method("embedding.unload", Empty, EmbeddingUnloadResult, POOL)
ATTACHMENT_ADD = Method("attachment.add", AttachmentAddParams, AttachmentInfo, POOL)  # reads, hashes and extracts a file

CHAT_DELTA = Topic("chat.delta", ChatDelta)
MODEL_PROGRESS = Topic("model.progress", ModelProgress)
DOWNLOAD_PROGRESS = Topic("download.progress", DownloadInfo)
JOB_WAITING = Topic("job.waiting", JobWaiting)
ATTACHMENT_PROGRESS = Topic("attachment.progress", AttachmentProgress)

# Every method and notification by its name: what a line from the other side is looked up in.
METHODS: dict[str, Method[Any, Any]] = {
    method.name: method
    for method in (
        INITIALIZE, SHUTDOWN, MODEL_LOAD, MODEL_UNLOAD, MODEL_COUNT_TOKENS, CHAT_GENERATE, CHAT_CANCEL, RUNTIME_METRICS,
        HUB_CATALOG, HUB_SEARCH, HUB_QUANTS, HUB_DRAFT_CHECK,
        DOWNLOAD_START, DOWNLOAD_PAUSE, DOWNLOAD_RESUME, DOWNLOAD_CANCEL, DOWNLOAD_LIST,
        MODELS_LIST, MODELS_ADD, MODELS_REMOVE, KV_STORE_INFO, KV_CLEAR, API_START, API_STOP,
        ATTACHMENT_ADD, EMBEDDING_LOAD, EMBEDDING_UNLOAD,
    )
}  # fmt: skip
TOPICS: dict[str, Topic[Any]] = {topic.name: topic for topic in (CHAT_DELTA, MODEL_PROGRESS, DOWNLOAD_PROGRESS, JOB_WAITING, ATTACHMENT_PROGRESS)}
NOTIFICATIONS: dict[str, type] = {topic.name: topic.params for topic in TOPICS.values()}


def decode_result(method: Method[Any, R], data: Any) -> R:
    """A method's result as its dataclass, decoded once where the answer arrives; INVALID_PARAMS naming a bad field."""
    return decode(method.result, data, "result")


def params_for(method: Method[P, Any], params: P | None) -> P:
    """Check that `params` is `method`'s params dataclass (None: its defaults, for methods that take none).

    mypy catches a wrong dataclass where the call is written; this catches it in code it does not check."""
    if not isinstance(method, Method):
        raise TypeError(f"expected a runtime.protocol.methods handle, not {method!r}")
    if params is None:
        params = method.params()
    if not isinstance(params, method.params):
        raise TypeError(f"{method.name} takes {method.params.__name__}, not {type(params).__name__}")
    return params
