"""The one protocol between Lokal's clients (GUI, CLI, API server, tests) and the runtime.

JSON-RPC 2.0, one JSON object per line, over the runtime's stdin/stdout.
Every method's parameters and result, and every notification, is a typed
dataclass below; `METHODS` and `NOTIFICATIONS` tie them to their names.
`decode()` validates incoming data against those types, so a malformed
message becomes an INVALID_PARAMS error reply instead of a crash deep inside
the engine.

Version handshake: a client sends its PROTOCOL_VERSION in `initialize`; the
runtime refuses a different major version with VERSION_MISMATCH.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

PROTOCOL_VERSION = "1.4"  # 1.1: api.start, api.stop, job.waiting; LocalModel.group. 1.2: llama.cpp's samplers, grammar/json_schema, tools; chat template errors. 1.3: chat.generate in the batch lane (several in flight, one per conversation); n_seq; MetricsResult.api_requests. 1.4: runtime.metrics takes MetricsParams.conversation_id (the panel follows the conversation on screen); ModelLoadParams.n_gpu_layers None (Auto, the default); ModelLoadResult.offload, MetricsResult.offload, InitializeResult.gpu_backends, Device.backend and id


def major(version: str) -> str:
    return version.split(".", 1)[0]


class ErrorCode(enum.IntEnum):
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    MODEL_NOT_FOUND = -32001
    INVALID_MODEL = -32002
    MODEL_TOO_LARGE = -32003
    NO_MODEL_LOADED = -32004
    BUSY = -32005
    UNKNOWN_REQUEST = -32006
    VERSION_MISMATCH = -32007
    CONTEXT_OVERFLOW = -32008
    NOT_INITIALIZED = -32009
    LISTEN_FAILED = -32010  # api.start: the address is taken or not this machine's
    OUTPUT_STALLED = -32011  # chat.generate: the client stopped reading stdout, so its reply was dropped (runtime/output_writer.py)
    # models from Hugging Face (runtime/hub)
    REPO_NOT_FOUND = -32040
    FILE_NOT_FOUND = -32041
    AUTH_REQUIRED = -32042  # gated or private, and no token: log in
    ACCESS_DENIED = -32043  # a token, but no access (gated terms not accepted)
    NETWORK_ERROR = -32044
    DISK_FULL = -32045
    CHECKSUM_MISMATCH = -32046
    DOWNLOAD_NOT_FOUND = -32047
    HUB_ERROR = -32048
    # Set by clients, never sent by the runtime: a call that got no answer, or a remote endpoint that failed.
    RUNTIME_DIED = -32090  # the runtime exited (or was shut down) before it answered
    REQUEST_TIMEOUT = -32091  # no answer within the call's timeout
    REMOTE_FAILED = -32095  # a remote OpenAI-compatible endpoint failed (app/remote)


class RpcError(Exception):
    """An error that travels as a JSON-RPC error object (code, message, data)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.data = data

    def to_dict(self) -> dict:
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_dict(cls, error: Any) -> "RpcError":
        """The error a reply carries; a malformed one (a bare string, a code that is not an integer) still
        becomes an RpcError that says what was wrong, so the call that waits for it gets an answer and the
        reader that parsed it keeps reading."""
        if not isinstance(error, dict):
            return cls(ErrorCode.INVALID_REQUEST, f"malformed error reply: error must be an object, got {type(error).__name__} {str(error)[:200]!r}")
        code = error.get("code", ErrorCode.INTERNAL_ERROR)
        message = error.get("message", "")
        if isinstance(code, bool) or not isinstance(code, int):
            return cls(ErrorCode.INVALID_REQUEST, f"malformed error reply: error.code must be an integer, got {code!r:.100} (message: {str(message)[:200]!r})", error.get("data"))
        if not isinstance(message, str):
            message = f"malformed error reply: error.message must be a string, got {message!r:.200}"
        return cls(code, message, error.get("data"))

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r})"


# --------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "cancelled", "tool_calls"]
ToolChoice = Literal["auto", "none", "required"]
KvType = Literal["f16", "q8_0", "q4_0"]
SpeculationMode = Literal["off", "auto", "lookup", "draft", "both"]


@dataclass
class Empty:
    pass


@dataclass
class InitializeParams:
    protocol_version: str = PROTOCOL_VERSION
    client: str = ""


GPU_DEVICE_TYPES = ("gpu", "igpu")  # device types that take offloaded layers


@dataclass
class Device:
    name: str  # the driver's description, e.g. "NVIDIA GeForce RTX 4070" or "llvmpipe (LLVM 15.0.6, 256 bits)"
    type: str  # "cpu", "gpu", "igpu", "accel"
    memory_total: int  # bytes, as ggml_backend_dev_memory reports them
    memory_free: int
    backend: str = ""  # the ggml backend it belongs to: "CPU", "CUDA", "Metal", "Vulkan", ...
    id: str = ""  # ggml's device name, e.g. "CUDA0", "Vulkan0" (what GGML_VK_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES select)


@dataclass
class InitializeResult:
    protocol_version: str
    lokal_version: str
    llama_cpp_version: str
    backend: str  # "cpu", "cuda", "metal", "vulkan", ...
    devices: list[Device]  # every device llama.cpp sees, the CPU included, with its memory
    capabilities: list[str]
    pid: int
    # The GPU backends this build of llama.cpp was built with ("cuda", "metal", "vulkan"); empty: this build runs
    # on the CPU, and n_gpu_layers changes nothing. A GPU backend with no device in `devices` found no GPU.
    gpu_backends: list[str] = field(default_factory=list)

    @property
    def gpu_devices(self) -> list[Device]:
        """The devices that can take offloaded layers; empty: every layer runs on the CPU."""
        return [d for d in self.devices if d.type in GPU_DEVICE_TYPES]


@dataclass
class ModelLoadParams:
    path: str
    n_ctx: int = 4096
    # Layers offloaded to the GPU device(s). None: Auto, as many as fit the devices' free memory with a margin
    # for the desktop (runtime/engine/memory.py, offload_layers), stepping down if llama.cpp still cannot allocate
    # them. -1: all of them. 0: CPU only. N: N layers. llama.cpp counts the output layer as one more layer, so a
    # model of 30 blocks has 31 (ModelLoadResult.offload.layers_total). On a build without a GPU backend, or with
    # no GPU device, every choice runs on the CPU (and the result says so).
    n_gpu_layers: Optional[int] = None
    type_k: KvType = "f16"
    type_v: KvType = "f16"
    flash_attn: Optional[bool] = None  # None: on when V is quantized, else llama.cpp's default
    n_threads: Optional[int] = None
    # A smaller model with the same tokenizer that drafts tokens for speculative decoding (runtime/speculative).
    draft_path: Optional[str] = None
    # Conversations held in the context at once (each may grow to n_ctx): replies decoded together, and recent
    # conversations kept warm. Fewer are loaded if that many do not fit in memory (ModelLoadResult.n_seq).
    n_seq: int = 4


@dataclass
class DeviceUse:
    """One GPU device holding offloaded layers, and its memory."""

    name: str  # Device.name
    id: str  # Device.id, e.g. "Vulkan0"
    layers: int  # offloaded layers on this device
    memory_total: int
    memory_free: int  # after the load
    memory_used: int  # by this load: the device's free memory before it, less after it (measured, not estimated)


@dataclass
class OffloadReport:
    """Where a load put the model's layers, and why that many (ModelLoadResult.offload, MetricsResult.offload)."""

    requested: Optional[int]  # ModelLoadParams.n_gpu_layers: None Auto, -1 all, 0 off, N
    layers: int  # layers offloaded to GPU devices (0: all on the CPU)
    layers_total: int  # the model's layers as llama.cpp counts them: its blocks and the output layer
    devices: list[DeviceUse] = field(default_factory=list)  # the GPU devices holding them (empty: none)
    # Why this many, in words: "all layers fit", "20 of 31 layers fit in 3.1 GiB free", "this build runs on the CPU", ...
    reason: str = ""
    # With Auto: the estimate needed for all layers and the budget judged against (free memory less the margin).
    needed_bytes: int = 0
    budget_bytes: int = 0
    # Layer counts llama.cpp could not allocate before this one succeeded (Auto steps down): empty when the first try loaded.
    stepped_down_from: list[int] = field(default_factory=list)
    step_down_error: str = ""  # what llama.cpp said about the last count that failed

    @property
    def on_gpu(self) -> bool:
        return self.layers > 0


@dataclass
class ModelLoadResult:
    model_id: str
    name: str
    architecture: str
    n_params: int
    file_size: int
    quantization: str
    n_ctx: int
    kv_bytes_per_token: int
    has_chat_template: bool
    path: str
    n_gpu_layers: int  # layers offloaded to the GPU (offload.layers): 0 when every layer is on the CPU
    type_k: str
    type_v: str
    load_ms: float
    draft_path: Optional[str] = None  # the draft model loaded with it, if any
    n_seq: int = 1  # conversations held in the context at once
    # Why the model's own chat template cannot be used (it does not parse or render): replies use ChatML instead.
    chat_template_error: Optional[str] = None
    tool_format: str = "hermes"  # how this model writes tool calls: "hermes", "llama3" or "mistral" (runtime/engine/tools.py)
    offload: Optional[OffloadReport] = None  # where the layers went and why (None only from an older runtime)
    draft_offload: Optional[OffloadReport] = None  # the draft model's, when one is loaded


@dataclass
class ModelProgress:
    """Notification `model.progress` while a model loads."""

    path: str
    progress: float  # 0.0 .. 1.0


@dataclass
class ModelUnloadResult:
    unloaded: bool


@dataclass
class ToolCall:
    """A call of one function, as the model wrote it: `arguments` is the JSON text of its arguments."""

    id: str
    name: str
    arguments: str


@dataclass
class ChatMessage:
    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)  # an assistant turn that called tools
    tool_call_id: Optional[str] = None  # role "tool": the call this message answers
    name: Optional[str] = None  # role "tool": the function that answered


@dataclass
class ToolSpec:
    """A function the model may call (OpenAI's `tools[].function`)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)  # a JSON schema of its arguments


@dataclass
class LogitBias:
    token: int
    bias: float  # added to the token's logit; -100 or less bans it


@dataclass
class ChatGenerateParams:
    conversation_id: str
    messages: list[ChatMessage]
    max_tokens: int = 512
    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40
    seed: Optional[int] = None
    stop: list[str] = field(default_factory=list)
    # Raw text to continue instead of `messages` rendered by the chat template (the API's /v1/completions).
    prompt: Optional[str] = None
    # Speculative decoding (runtime/speculative): auto = prompt lookup, plus the draft model if one is loaded.
    speculation: SpeculationMode = "auto"
    # llama.cpp's samplers (runtime/engine/sampling.py), with llama-server's defaults: 1.0 / 0 turn one off.
    min_p: float = 0.05
    typical_p: float = 1.0
    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    penalty_last_n: int = 64  # recent tokens (prompt included) the penalties look at; -1: the whole context
    dry_multiplier: float = 0.0  # DRY (don't repeat yourself) penalty; 0: off
    dry_base: float = 1.75
    dry_allowed_length: int = 2
    dry_penalty_last_n: int = -1  # -1: the whole context
    logit_bias: list[LogitBias] = field(default_factory=list)
    # Constrained output, at most one of: a GBNF grammar (root rule "root"), or a JSON schema the reply
    # must validate against ({} or {"type": "object"}: any JSON object).
    grammar: Optional[str] = None
    json_schema: Optional[dict[str, Any]] = None
    # Functions the model may call: rendered by the model's chat template, calls parsed into the result.
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"  # required: the reply is a call (grammar-constrained); none: no call
    tool_name: Optional[str] = None  # the one function the reply must call (a grammar makes sure)


@dataclass
class GenerationStats:
    prompt_tokens: int = 0
    prompt_tokens_reused: int = 0
    prompt_tokens_evaluated: int = 0
    completion_tokens: int = 0
    ttft_ms: float = 0.0
    prefill_tokens_per_s: float = 0.0
    decode_tokens_per_s: float = 0.0
    total_ms: float = 0.0
    rss_bytes: int = 0
    # Prompt tokens taken from a saved KV state (kv store) instead of being evaluated; disjoint from
    # prompt_tokens_reused (the live cache): reused + restored + evaluated == prompt_tokens.
    prompt_tokens_restored: int = 0
    kv_restore_ms: float = 0.0  # time to find, read, check and load that state (part of ttft_ms)
    kv_restore_source: str = ""  # "ram", "disk", or "" when nothing was restored
    # The prefill time the restore spared, from this model's measured prefill speed, less kv_restore_ms (0: unknown).
    kv_restore_saved_ms: float = 0.0
    # Oldest messages left out because the conversation no longer fits the context (system prompt kept).
    context_dropped_messages: int = 0
    # Why this reply was prompted with ChatML instead of the model's own chat template ("": it was not).
    chat_template_fallback: str = ""
    # Speculative decoding (runtime/speculative), this turn so far.
    speculation: str = "off"  # the setting it ran with
    speculation_notice: str = ""  # why speculation was switched off, if it was
    draft_tokens: int = 0  # tokens drafted (prompt lookup and draft model)
    draft_tokens_accepted: int = 0
    acceptance_rate: float = 0.0  # accepted / drafted
    mean_accepted_length: float = 0.0  # accepted tokens per draft
    target_passes: int = 0  # target forward passes while decoding
    tokens_per_target_pass: float = 0.0
    speedup: float = 0.0  # decode rate / the plain decode rate measured on this machine (0: not measured yet)


@dataclass
class ChatGenerateResult:
    request_id: Union[int, str]
    conversation_id: str
    text: str  # with tools: the reply's text outside its tool calls
    finish_reason: FinishReason
    stats: GenerationStats
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass
class ChatDelta:
    """Notification `chat.delta`: text that streamed since the previous delta."""

    request_id: Union[int, str]
    conversation_id: str
    text: str


@dataclass
class ChatCancelParams:
    request_id: Union[int, str]


@dataclass
class ChatCancelResult:
    cancelled: bool


@dataclass
class MetricsParams:
    # The conversation whose figures are wanted (the one on the window's screen); None: this client's newest reply.
    conversation_id: Optional[str] = None


@dataclass
class MetricsResult:
    rss_bytes: int
    model_id: Optional[str]
    n_ctx: int  # per conversation
    kv_tokens_used: int  # the context of the asked conversation's reply, else this client's newest (streaming, else the last one)
    kv_bytes_used: int  # the KV cache of every sequence held now
    devices: list[Device]
    # Live figures of the asked conversation's reply (else this client's newest) streaming now; None while none
    # streams, also while only the API's (or only another conversation's) do.
    generation: Optional[GenerationStats] = None
    kv_tokens_total: int = 0  # tokens held by every sequence (conversations streaming and resting)
    n_seq: int = 0  # sequences the context holds
    # Requests the API is answering or has waiting now (0 when it does not serve): a window that is
    # asked to close says so, because stopping the API would cut those replies off.
    api_requests: int = 0
    offload: Optional[OffloadReport] = None  # the loaded model's (ModelLoadResult.offload): the panel's "28/28 layers on ..."


@dataclass
class KvStoreInfoParams:
    # Wait (up to 30 s) until the last reply's state is copied out and every queued write is on disk.
    # It blocks the runtime's reader meanwhile: for tools and tests, not for a window that polls.
    wait_for_writes: bool = False


@dataclass
class KvStoreInfo:
    """`kv.store_info`: the saved KV states (conversations that stay warm)."""

    enabled: bool
    path: str
    entries: int
    disk_bytes: int
    disk_budget_bytes: int
    ram_bytes: int
    ram_budget_bytes: int
    pending_writes: int


@dataclass
class KvClearResult:
    removed_files: int
    freed_bytes: int


# ---- models from Hugging Face: catalog, quantization levels, fit, downloads, local models (runtime/hub)

FitLabel = Literal["gpu", "ram", "too_big", "unknown"]
# waiting: another process (a `lokal pull`, the window, another Hugging Face tool) is fetching the same file
DownloadState = Literal["queued", "waiting", "running", "paused", "verifying", "done", "failed", "cancelled"]


@dataclass
class CatalogEntry:
    repo: str
    name: str
    family: str = ""
    params: str = ""
    quant: str = "Q4_K_M"  # the recommended level
    draft: Optional[str] = None  # repo of the recommended draft partner
    description: str = ""


@dataclass
class HubCatalogResult:
    entries: list[CatalogEntry]


@dataclass
class HubSearchParams:
    query: str = ""
    limit: int = 20


@dataclass
class HubRepo:
    id: str
    downloads: int = 0
    likes: int = 0
    gated: bool = False
    last_modified: str = ""


@dataclass
class HubSearchResult:
    repos: list[HubRepo]


@dataclass
class HubQuantsParams:
    repo: str
    revision: str = "main"
    n_ctx: int = 4096
    type_k: KvType = "f16"
    type_v: KvType = "f16"
    read_header: bool = True  # read one file's GGUF header over HTTP ranges for the fit labels


@dataclass
class GGUFSummary:
    architecture: str
    name: str
    quantization: str
    n_layers: int
    n_head_kv: int
    key_length: int
    value_length: int
    context_length: int
    vocab_size: int
    tokenizer_model: str
    tokenizer_pre: str
    bos_token_id: Optional[int]
    eos_token_id: Optional[int]
    kv_bytes_per_token: int  # at f16
    header_bytes: int
    tensor_bytes: int
    has_chat_template: bool


@dataclass
class MemoryFit:
    weights: int
    kv_cache: int
    compute: int
    ram_needed: int
    gpu_needed: int
    label: FitLabel
    detail: str


@dataclass
class QuantLevel:
    name: str
    files: list[str]
    size: int
    sha256: list[Optional[str]]
    fit: Optional[MemoryFit] = None
    problem: Optional[str] = None  # e.g. a split file with a missing part
    downloaded: bool = False


@dataclass
class HubQuantsResult:
    repo: str
    commit: str
    levels: list[QuantLevel]
    header: Optional[GGUFSummary] = None
    header_file: str = ""
    header_bytes_fetched: int = 0
    ram_available: int = 0
    gpu_free: int = 0


@dataclass
class ModelRef:
    """A model file: a local path, or a repository with a quant level (or a file) in it."""

    path: Optional[str] = None
    repo: Optional[str] = None
    quant: Optional[str] = None
    file: Optional[str] = None
    revision: str = "main"


@dataclass
class DraftCheckParams:
    target: ModelRef
    draft: ModelRef


@dataclass
class DraftCheckResult:
    compatible: bool
    reasons: list[str]
    target: GGUFSummary
    draft: GGUFSummary


@dataclass
class DownloadStartParams:
    repo: str
    quant: Optional[str] = None  # default: Q4_K_M, else the first level
    files: list[str] = field(default_factory=list)  # instead of a quant: these files
    revision: str = "main"


@dataclass
class DownloadIdParams:
    id: str


@dataclass
class DownloadInfo:
    """Also the notification `download.progress`, sent at least twice a second while a download runs."""

    id: str
    repo: str
    revision: str
    quant: str
    files: list[str]
    state: DownloadState
    bytes_done: int
    bytes_total: int
    speed: float = 0.0  # bytes per second, over the last few seconds
    eta_s: Optional[float] = None
    current_file: str = ""
    paths: list[str] = field(default_factory=list)  # the snapshot paths, once done
    error: Optional[str] = None
    error_code: Optional[int] = None
    attempts: int = 0  # retries after transient errors in this run


@dataclass
class DownloadListResult:
    downloads: list[DownloadInfo]


@dataclass
class LocalModel:
    id: str
    path: str
    name: str
    source: Literal["hf_cache", "added", "bundled"]  # bundled: in Lokal's models folder (the starter model and any GGUF put there)
    size: int
    quantization: str = "unknown"
    architecture: str = "unknown"
    n_params: int = 0
    context_length: int = 0
    repo: Optional[str] = None
    files: list[str] = field(default_factory=list)  # every part of a split model
    problem: Optional[str] = None  # why it cannot be loaded (unreadable header, missing part)
    group: str = ""  # what the quantizations of one model share ("Qwen2.5 Coder 1.5B Instruct"): the window's menu groups by it
    identity: str = ""  # the file's identity (runtime/models/identity.py): one menu entry and one set of load settings per file, wherever it lies


@dataclass
class ModelsListResult:
    models: list[LocalModel]


@dataclass
class ModelsAddParams:
    path: str


@dataclass
class ModelsRemoveParams:
    id: str
    # A file the user added from their own folder only leaves the list, unless this asks to delete the file
    # itself too. Downloads (the Hugging Face cache) and files in Lokal's models folder are always deleted.
    delete_file: bool = False


@dataclass
class ModelsRemoveResult:
    removed: bool
    freed_bytes: int


# ---- the OpenAI-compatible API, served from inside the runtime (runtime/api) ----------------------


@dataclass
class ApiStartParams:
    host: str = "127.0.0.1"
    port: int = 8080  # 0: any free port (the result says which)
    allow_network: bool = False  # needed for any host that is not loopback
    key_file: Optional[str] = None  # the bearer key's file (made 0600 if missing); None: `api-key` in the config directory
    cors_origins: list[str] = field(default_factory=list)  # empty: no CORS headers; "*": any origin
    max_queue: int = 8  # API requests that may wait behind the running one before 429
    max_body: int = 4 * 1024 * 1024  # bytes; larger bodies get 413


@dataclass
class ApiStartResult:
    url: str  # http://HOST:PORT/v1
    host: str
    port: int
    key_file: str
    model: Optional[str]  # the id clients use for the loaded model (its file name); None while none is


@dataclass
class ApiStopResult:
    stopped: bool  # False: it was not serving


@dataclass
class JobWaiting:
    """Notification `job.waiting`: this client's engine job waits for the API's running reply (then it runs)."""

    request_id: Union[int, str]
    method: str


@dataclass
class ShutdownResult:
    ok: bool = True


class Lane(enum.Enum):
    """Where the runtime runs a method, declared once here for the server and the clients."""

    ENGINE = "engine"  # the engine alone (job_slot.py): one at a time, and while one runs or waits a client's next engine or batch job gets BUSY
    BATCH = "batch"  # decoded together by the scheduler: a client may have several in flight, one per conversation (a second gets BUSY)
    POOL = "pool"  # a small thread pool: waits on the network or the disk, never on the engine
    IMMEDIATE = "immediate"  # answered on the reader thread at once, even while a reply streams


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


# --------------------------------------------------------------------------
# Typed (de)serialisation
# --------------------------------------------------------------------------

_hints_cache: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _hints_cache.get(cls)
    if hints is None:
        hints = _hints_cache[cls] = typing.get_type_hints(cls)
    return hints


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _decode_value(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode_value(option, value, path)
            except RpcError:
                pass
        raise _invalid(path, " or ".join(_type_name(o) for o in options), value)
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"{path}: expected one of {list(allowed)}, got {value!r}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise _invalid(path, "list", value)
        (item_type,) = typing.get_args(tp)
        return [_decode_value(item_type, item, f"{path}[{i}]") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise _invalid(path, "object", value)
        return value
    if dataclasses.is_dataclass(tp):
        return decode(tp, value, path)
    if tp is bool:
        if not isinstance(value, bool):
            raise _invalid(path, "bool", value)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _invalid(path, "int", value)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _invalid(path, "number", value)
        if not math.isfinite(value):  # Python's json reads NaN and Infinity, which JSON has not got
            raise RpcError(ErrorCode.INVALID_PARAMS, f"{path}: expected a finite number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise _invalid(path, "string", value)
        return value
    raise TypeError(f"protocol type {tp!r} at {path} is not supported")


def _invalid(path: str, expected: str, value: Any) -> RpcError:
    got = "null" if value is None else type(value).__name__
    return RpcError(ErrorCode.INVALID_PARAMS, f"{path}: expected {expected}, got {got}")


def decode(cls: type, data: Any, path: str = "params") -> Any:
    """Build dataclass `cls` from JSON data, or raise INVALID_PARAMS naming the bad field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise _invalid(path, "object", data)
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"{path}: unknown field(s) {', '.join(unknown)}")
    kwargs = {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = _decode_value(hints[name], data[name], f"{path}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"{path}.{name}: required field is missing")
    return cls(**kwargs)


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


def encode(obj: Any) -> Any:
    """A dataclass as JSON data (what dataclasses.asdict gives, without its deep copy of every value)."""
    return json.loads(json.dumps(obj, default=_fields)) if dataclasses.is_dataclass(obj) and not isinstance(obj, type) else obj


@functools.cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None


def _fields(obj: Any) -> dict:
    """json.dumps's `default`: a dataclass's fields. The lines are written straight from the dataclasses,
    so the C encoder does the work: the window encodes conversations of thousands of messages on its GUI
    thread, and dataclasses.asdict took 0.2 s for 3,400 of them."""
    names = _field_names(type(obj))
    if names is None:
        raise TypeError(f"{type(obj).__name__} is not JSON serializable")
    return {name: getattr(obj, name) for name in names}


# --------------------------------------------------------------------------
# Framing
# --------------------------------------------------------------------------

RequestId = Union[int, str]


@dataclass
class Request:
    id: RequestId
    method: str
    params: Any


@dataclass
class Notification:
    method: str
    params: Any


@dataclass
class Response:
    id: Optional[RequestId]
    result: Any = None
    error: Optional[RpcError] = None


Incoming = Union[Request, Notification, Response]


def dump_line(message: dict) -> bytes:
    """One line of JSON; dataclasses in it are written as their fields (_fields)."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=_fields) + "\n").encode("utf-8")


def request_line(request_id: RequestId, method: str, params: Any = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return dump_line(message)


def notification_line(method: str, params: Any) -> bytes:
    return dump_line({"jsonrpc": "2.0", "method": method, "params": params})


def result_line(request_id: RequestId, result: Any) -> bytes:
    return dump_line({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_line(request_id: Optional[RequestId], error: RpcError) -> bytes:
    return dump_line({"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()})


def parse_line(line: Union[bytes, str]) -> Incoming:
    """Parse one line into a Request, Notification or Response; RpcError if it is none of them."""
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RpcError(ErrorCode.PARSE_ERROR, f"not valid JSON: {exc}") from None
    except RecursionError:  # the JSON decoder's own bound on nesting (about a thousand levels)
        raise RpcError(ErrorCode.PARSE_ERROR, "not valid JSON: arrays or objects nest too deeply") from None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(ErrorCode.INVALID_REQUEST, "expected a JSON-RPC 2.0 object")
    request_id = message.get("id")
    if request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, (int, str))):
        raise RpcError(ErrorCode.INVALID_REQUEST, "id must be an integer or a string")
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str):
            raise RpcError(ErrorCode.INVALID_REQUEST, "method must be a string", {"id": request_id})
        params = message.get("params")
        if "id" in message:
            return Request(request_id, method, params)
        return Notification(method, params)
    if "result" in message or "error" in message:
        error = message.get("error")
        return Response(request_id, message.get("result"), RpcError.from_dict(error) if error is not None else None)
    raise RpcError(ErrorCode.INVALID_REQUEST, "neither a request nor a response")
