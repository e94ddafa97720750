"""Loading and unloading a model (model.load, model.unload, the model.progress notification), and counting a text's
tokens with the loaded one (model.count_tokens)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

KvType = Literal["f16", "q8_0", "q4_0"]
# How a model spreads over several GPU devices (llama.cpp's --split-mode): none uses main_gpu alone, layer
# (llama.cpp's default) puts whole layers on each device, row splits each layer's rows too.
SplitMode = Literal["none", "layer", "row"]


@dataclass
class ModelLoadParams:
    path: str
    n_ctx: int = 4096
    # Layers offloaded to the GPU device(s). None: Auto, as many as fit the devices' free memory with a margin
    # for the desktop (runtime/llama/memory.py, offload_layers), stepping down if llama.cpp still cannot allocate
    # them. -1: all of them. 0: CPU only. N: N layers. llama.cpp counts the output layer as one more layer, so a
    # model of 30 blocks has 31 (ModelLoadResult.offload.layers_total). On a build without a GPU backend, or with
    # no GPU device, every choice runs on the CPU (and the result says so).
    n_gpu_layers: Optional[int] = None
    type_k: KvType = "f16"
    type_v: KvType = "f16"
    # None: on when V is quantized, else llama.cpp's choice (on where the device has the kernel, the CPU included; see
    # LlamaModel for why Off, faster on a CPU, is not the default). False counts the attention scores it keeps in the fit
    # check (memory.estimate_load). ModelLoadResult.flash_attn says what the load used.
    flash_attn: Optional[bool] = None
    n_threads: Optional[int] = None
    # A smaller model with the same tokenizer that drafts tokens for speculative decoding (runtime/speculative).
    draft_path: Optional[str] = None
    # Conversations held in the context at once (each may grow to n_ctx): replies decoded together, and recent
    # conversations kept warm. Fewer are loaded if that many do not fit in memory (ModelLoadResult.n_seq).
    n_seq: int = 4
    # With more than one GPU device: how the model spreads over them, and the device (index among the GPU
    # devices, InitializeResult.gpu_devices) that holds the whole model with split_mode "none" (and the
    # intermediate results otherwise). llama.cpp's defaults; one GPU device or none: they change nothing.
    split_mode: SplitMode = "layer"
    main_gpu: int = 0
    # The model's projector (an `mmproj` GGUF from the same repository): with it the model can see pictures
    # (ChatMessage.attachments of kind "image"; runtime/vision). None: text only.
    mmproj_path: Optional[str] = None


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
    vision: bool = False  # a projector is loaded with it (ModelLoadParams.mmproj_path): messages may hold pictures
    flash_attn: Optional[bool] = None  # flash attention as loaded; None: llama.cpp chose (on a GPU device with the kernel)


@dataclass
class ModelProgress:
    """Notification `model.progress` while a model loads."""

    path: str
    progress: float  # 0.0 .. 1.0


@dataclass
class ModelUnloadResult:
    unloaded: bool


@dataclass
class CountTokensParams:
    """`model.count_tokens` (protocol 1.12): a message being written, counted as a turn's content is read."""

    text: str


@dataclass
class CountTokensResult:
    tokens: int  # the text's tokens for the loaded chat model (no BOS; special tokens' names count as text, as a message's do)
    n_ctx: int  # the context each conversation has
