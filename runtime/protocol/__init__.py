"""The one protocol between Lokal's clients (GUI, CLI, API server, tests) and the runtime.

JSON-RPC 2.0, one JSON object per line, over the runtime's stdin/stdout.
Every method's parameters and result, and every notification, is a typed
dataclass; `methods` ties them to their names and lanes. `decode()` validates
incoming data against those types, so a malformed message becomes an
INVALID_PARAMS error reply instead of a crash deep inside the engine.

Version handshake: a client sends its PROTOCOL_VERSION in `initialize`; the
runtime refuses a different major version with VERSION_MISMATCH.

The package, one topic a module (everything is re-exported here, so
`from runtime.protocol import X` is the way in):
- version: PROTOCOL_VERSION and the major-version rule;
- errors: ErrorCode and RpcError;
- lanes: where the runtime runs each method;
- messages, one module an area: session (initialize, shutdown, devices), model,
  chat, metrics, kv, hub (Hugging Face and downloads), local_models, api, attachments, embeddings; fetch (the `lokal fetch-model`
  process's own notifications);
- codec: JSON data to the dataclasses and back;
- methods: each method as a typed handle, Method[P, R] (`methods.CHAT_GENERATE`), and each
  notification as a Topic[T];
- framing: lines, requests, notifications and responses.
"""

from runtime.protocol.version import PROTOCOL_VERSION, major
from runtime.protocol.errors import ContextOverflow, ErrorCode, RpcError
from runtime.protocol.lanes import Lane
from runtime.protocol.session import (
    Device,
    Empty,
    GPU_DEVICE_TYPES,
    InitializeParams,
    InitializeResult,
    JobWaiting,
    ShutdownResult,
)
from runtime.protocol.model import (
    CountTokensParams,
    CountTokensResult,
    DeviceUse,
    KvType,
    SplitMode,
    ModelLoadParams,
    ModelLoadResult,
    ModelProgress,
    ModelUnloadResult,
    OffloadReport,
)
from runtime.protocol.chat import (
    ChatCancelParams,
    ChatCancelResult,
    ChatDelta,
    ChatGenerateParams,
    ChatGenerateResult,
    ChatMessage,
    FinishReason,
    GenerationStats,
    LogitBias,
    MAX_TOP_LOGPROBS,
    Role,
    SpeculationMode,
    ReasoningEffort,
    ReasoningFormat,
    TokenChoice,
    TokenLogprob,
    ToolCall,
    ToolChoice,
    ToolSpec,
)
from runtime.protocol.metrics import MetricsParams, MetricsResult
from runtime.protocol.kv import KvClearResult, KvStoreInfo, KvStoreInfoParams
from runtime.protocol.hub import (
    CatalogEntry,
    CatalogKind,
    DownloadIdParams,
    DownloadInfo,
    DownloadListResult,
    DownloadStartParams,
    DownloadState,
    DraftCheckParams,
    DraftCheckResult,
    FitLabel,
    GGUFSummary,
    HubCatalogResult,
    HubQuantsParams,
    HubQuantsResult,
    HubRepo,
    HubSearchParams,
    HubSearchResult,
    MemoryFit,
    ModelRef,
    QuantLevel,
)
from runtime.protocol.local_models import (
    LocalModel,
    ModelsAddParams,
    ModelsListResult,
    ModelsRemoveParams,
    ModelsRemoveResult,
)
from runtime.protocol.attachments import Attachment, AttachmentAddParams, AttachmentInfo, AttachmentKind, AttachmentProgress, Citation
from runtime.protocol.embeddings import EmbeddingLoadParams, EmbeddingLoadResult, EmbeddingUnloadResult
from runtime.protocol.api import ApiDefaults, ApiStartParams, ApiStartResult, ApiStopResult
from runtime.protocol.fetch import (
    FETCH_NOTIFICATION_NAMES,
    FETCH_NOTIFICATIONS,
    ModelFetchDone,
    ModelFetchFailed,
    ModelFetchProgress,
    ModelFetchStatus,
)
from runtime.protocol.codec import decode, encode
from runtime.protocol.methods import (
    METHODS,
    Method,
    NOTIFICATIONS,
    TOPICS,
    Topic,
    decode_result,
    params_for,
)
from runtime.protocol.framing import (
    Incoming,
    Notification,
    Request,
    RequestId,
    Response,
    dump_line,
    error_line,
    notification_line,
    parse_line,
    request_line,
    result_line,
)

__all__ = [
    "ApiDefaults",
    "ApiStartParams",
    "ApiStartResult",
    "ApiStopResult",
    "Attachment",
    "AttachmentAddParams",
    "AttachmentInfo",
    "AttachmentProgress",
    "AttachmentKind",
    "BATCH",
    "CatalogEntry",
    "CatalogKind",
    "ChatCancelParams",
    "ChatCancelResult",
    "ChatDelta",
    "ChatGenerateParams",
    "ChatGenerateResult",
    "ChatMessage",
    "Citation",
    "Device",
    "DeviceUse",
    "DownloadIdParams",
    "DownloadInfo",
    "DownloadListResult",
    "DownloadStartParams",
    "DownloadState",
    "DraftCheckParams",
    "DraftCheckResult",
    "ENGINE",
    "EmbeddingLoadParams",
    "EmbeddingLoadResult",
    "EmbeddingUnloadResult",
    "Empty",
    "ContextOverflow",
    "ErrorCode",
    "FinishReason",
    "FitLabel",
    "GGUFSummary",
    "GPU_DEVICE_TYPES",
    "GenerationStats",
    "HubCatalogResult",
    "HubQuantsParams",
    "HubQuantsResult",
    "HubRepo",
    "HubSearchParams",
    "HubSearchResult",
    "Incoming",
    "InitializeParams",
    "InitializeResult",
    "JobWaiting",
    "KvClearResult",
    "KvStoreInfo",
    "KvStoreInfoParams",
    "KvType",
    "SplitMode",
    "FETCH_NOTIFICATIONS",
    "FETCH_NOTIFICATION_NAMES",
    "ModelFetchDone",
    "ModelFetchFailed",
    "ModelFetchProgress",
    "ModelFetchStatus",
    "Lane",
    "LocalModel",
    "LogitBias",
    "MAX_TOP_LOGPROBS",
    "METHODS",
    "MemoryFit",
    "Method",
    "MetricsParams",
    "MetricsResult",
    "ModelLoadParams",
    "ModelLoadResult",
    "ModelProgress",
    "ModelRef",
    "ModelUnloadResult",
    "CountTokensParams",
    "CountTokensResult",
    "ModelsAddParams",
    "ModelsListResult",
    "ModelsRemoveParams",
    "ModelsRemoveResult",
    "NOTIFICATIONS",
    "TOPICS",
    "Topic",
    "Notification",
    "OffloadReport",
    "POOL",
    "PROTOCOL_VERSION",
    "QuantLevel",
    "Request",
    "RequestId",
    "Response",
    "Role",
    "RpcError",
    "ShutdownResult",
    "SpeculationMode",
    "ReasoningEffort",
    "ReasoningFormat",
    "TokenChoice",
    "TokenLogprob",
    "ToolCall",
    "ToolChoice",
    "ToolSpec",
    "decode",
    "decode_result",
    "dump_line",
    "encode",
    "error_line",
    "major",
    "notification_line",
    "params_for",
    "parse_line",
    "request_line",
    "result_line",
]
