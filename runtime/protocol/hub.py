"""Models from Hugging Face: catalog, search, quantization levels and their fit, draft checks, downloads (runtime/hub)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from runtime.protocol.model import KvType

FitLabel = Literal["gpu", "ram", "too_big", "unknown"]
# waiting: another process (a `lokal pull`, the window, another Hugging Face tool) is fetching the same file
DownloadState = Literal["queued", "waiting", "running", "paused", "verifying", "done", "failed", "cancelled"]
# What a catalog model is for: the browser marks it, the window offers embedding models for documents and vision
# models for pictures. A reasoning model thinks before it answers; a vision model also reads pictures (its `mmproj`).
CatalogKind = Literal["chat", "reasoning", "coder", "vision", "embedding"]


@dataclass
class CatalogEntry:
    repo: str
    name: str
    family: str = ""
    params: str = ""
    quant: str = "Q4_K_M"  # the recommended level
    draft: Optional[str] = None  # repo of the recommended draft partner
    description: str = ""
    kind: CatalogKind = "chat"
    # The multimodal projector file in the repository (vision models): downloaded with any level, counted in its fit.
    mmproj: Optional[str] = None
    thinking: bool = False  # thinks before answering (<think>, harmony channels), whatever its kind (a reasoning coder)


@dataclass
class HubCatalogResult:
    entries: list[CatalogEntry]
    version: str = ""  # the catalog's own version (catalog.json "version"), to say which list a user sees


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
    # A draft model to be downloaded and loaded with each level (a catalog entry's draft partner): its header is
    # read too, and each level's fit counts both models (MemoryFit.detail says so).
    draft: Optional[ModelRef] = None


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
    detail: str  # in English, for logs and older clients: a window says it from the figures
    # What the label was judged against (protocol 1.12), so a window can say it in its own language.
    ram_available: int = 0
    gpu_free: int = 0
    has_gpu: bool = False
    draft: str = ""  # the draft model counted in with the level, by its name
    draft_unknown: str = ""  # why the draft model asked for is not counted in (its header could not be read)


@dataclass
class QuantLevel:
    name: str
    files: list[str]
    size: int
    sha256: list[Optional[str]]
    fit: Optional[MemoryFit] = None
    problem: Optional[str] = None  # e.g. a split file with a missing part
    downloaded: bool = False
    # A vision model's projector, downloaded with the level and counted in `fit` (its size is not in `size`).
    mmproj: Optional[str] = None
    mmproj_size: int = 0


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
    # A level of a repository with a multimodal projector brings the projector too (the catalog's choice, else the
    # preferred precision); False downloads the text model alone.
    with_mmproj: bool = True


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
    # The error's data (the figures and names a window words it from in its own language; protocol 1.12).
    error_data: Optional[dict[str, Any]] = None


@dataclass
class DownloadListResult:
    downloads: list[DownloadInfo]
