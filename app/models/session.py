"""ModelSession: which model the runtime should hold, loading it, and loading it again after a restart."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Callable, Optional

from PySide6.QtCore import QObject, Signal

from app.runtime_link import RuntimeLink
from app.runtime_link.error_words import said
from runtime.protocol import ErrorCode, KvType, MetricsResult, ModelLoadParams, ModelLoadResult, RpcError, SpeculationMode, SplitMode, methods

LOAD_TIMEOUT_MS = 10 * 60_000


@dataclass(frozen=True)
class ModelChoice:
    """What to load: a file and its load settings (app/models/loader.py makes it from the stored ones)."""

    path: str
    n_ctx: int = 4096
    n_gpu_layers: Optional[int] = None  # None: Auto, as many layers on the GPU as fit (ModelLoadParams.n_gpu_layers)
    type_k: KvType = "f16"
    type_v: KvType = "f16"
    flash_attn: Optional[bool] = None  # None: Auto, the runtime's choice (ModelLoadParams.flash_attn)
    n_threads: Optional[int] = None
    n_seq: int = 4
    draft_path: Optional[str] = None
    model_n_ctx: Optional[int] = None  # the context the model's load settings give, for a conversation that sets none
    split_mode: SplitMode = "layer"  # with several GPU devices (ModelLoadParams.split_mode, main_gpu)
    main_gpu: int = 0
    # The model's projector (LocalModel.mmproj, downloaded beside a vision model's level): loaded with it, the model sees pictures
    mmproj_path: Optional[str] = None

    def params(self) -> ModelLoadParams:
        return ModelLoadParams(path=self.path, n_ctx=self.n_ctx, n_gpu_layers=self.n_gpu_layers, type_k=self.type_k, type_v=self.type_v,
                               flash_attn=self.flash_attn, n_threads=self.n_threads, n_seq=self.n_seq, draft_path=self.draft_path, split_mode=self.split_mode,
                               main_gpu=self.main_gpu, mmproj_path=self.mmproj_path)


class ModelSession(QObject):
    sig_loading = Signal(str)  # path
    sig_progress = Signal(float)  # 0..1
    sig_loaded = Signal(object)  # ModelLoadResult
    sig_failed = Signal(str, str)  # path, message

    def __init__(self, link: RuntimeLink, parent: QObject | None = None, name_of: Callable[[ModelLoadResult], str] | None = None):
        super().__init__(parent)
        self.link = link
        self.wanted: ModelChoice | None = None
        self.loaded: ModelLoadResult | None = None
        self._name_of = name_of or (lambda info: info.name)
        self.loading: ModelChoice | None = None
        self.preparing = 0  # loads whose settings are being worked out (app/models/loader.py), not sent yet
        self.speculation: SpeculationMode = "auto"  # the model's speculation setting: its replies ask for it (a per-reply setting, no reload)
        self.context_fit: Callable[[int], int] | None = None  # the most of a context size that fits (app/models/loader.py)
        self._previous: ModelChoice | None = None
        self._verifying = False
        link.sig_progress.connect(self._on_progress)
        link.sig_ready.connect(self._on_runtime_ready)
        link.sig_crashed.connect(self._on_runtime_crashed)

    @property
    def busy(self) -> bool:
        """A load is on its way, or a failed one is being checked for what it left loaded."""
        return self.loading is not None or self._verifying or self.preparing > 0

    @property
    def display_name(self) -> str:
        """The loaded model's name as the model menu shows it (what its quantizations share); "" while none is loaded."""
        return self._name_of(self.loaded) if self.loaded is not None else ""

    def load(self, choice: ModelChoice) -> None:
        """Load `choice` (queued behind a running reply); a failure keeps the previous model."""
        if self.wanted == choice and (self.loading == choice or (self.loaded is not None and self.loading is None)):
            return  # held already, or on its way (the model list, come meanwhile, worked the same load out again)
        self._previous = self.wanted if self.loaded is not None else self._previous
        self.wanted = choice
        self._send_load(choice)

    def ensure_context(self, n_ctx: int | None) -> None:
        """The conversation asks for another context size (None: the model's own setting): reload the same file with it."""
        if self.wanted is None:
            return
        n_ctx = n_ctx or self.wanted.model_n_ctx or self.wanted.n_ctx
        if self.wanted.n_ctx != n_ctx and self.context_fit is not None:
            n_ctx = self.context_fit(n_ctx)  # what fits this machine, the user told before the load if that is less
        if self.wanted.n_ctx != n_ctx:
            self.load(dataclasses.replace(self.wanted, n_ctx=n_ctx))

    def _send_load(self, choice: ModelChoice, first: bool = False) -> None:
        self._last_progress = -1.0
        self.loading = choice
        self.sig_loading.emit(choice.path)
        params = choice.params()
        self.link.call(
            methods.MODEL_LOAD,
            params,
            on_result=lambda result: self._on_loaded(choice, result),
            on_error=lambda error: self._on_load_failed(choice, error),
            timeout_ms=LOAD_TIMEOUT_MS,
            first=first,
        )

    def _on_progress(self, path: str, fraction: float) -> None:
        # llama.cpp reports hundreds of steps; a percent is all a progress bar can show.
        if self.loading is not None and (int(fraction * 100) != int(self._last_progress * 100) or fraction >= 1.0):
            self._last_progress = fraction
            self.sig_progress.emit(fraction)

    def _on_loaded(self, choice: ModelChoice, loaded: ModelLoadResult) -> None:
        if self.loading == choice:
            self.loading = None
        self.loaded = loaded
        self.sig_loaded.emit(loaded)

    def _on_load_failed(self, choice: ModelChoice, error: RpcError) -> None:
        if self.loading == choice:
            self.loading = None
        if error.code == ErrorCode.RUNTIME_DIED:
            return  # the runtime restarts and _on_runtime_ready loads `wanted` again
        self.sig_failed.emit(choice.path, said(error))
        # The runtime checks a file before it drops the old model, but a failure inside llama.cpp
        # leaves none: go back to the previous choice so the app keeps working.
        previous = self._previous
        self.wanted = previous
        self._verifying = True
        self.link.call(methods.RUNTIME_METRICS, None, on_result=functools.partial(self._after_failure, previous=previous), on_error=lambda _e: self._end_verify(), timeout_ms=10_000)

    def _after_failure(self, metrics: MetricsResult, previous: ModelChoice | None) -> None:
        self._verifying = False
        if metrics.model_id is None:
            self.loaded = None
            if previous is not None:
                self._send_load(previous, first=True)

    def _end_verify(self) -> None:
        self._verifying = False

    def _on_runtime_crashed(self, _description: str) -> None:
        self.loaded = None
        self.loading = None
        self._verifying = False

    def _on_runtime_ready(self, _info: object) -> None:
        if self.wanted is not None and self.loaded is None and self.loading is None:
            # Ahead of any reply the user asked for while the runtime restarted: it needs the model.
            self._send_load(self.wanted, first=True)
