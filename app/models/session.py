"""ModelSession: which model the runtime should hold, loading it, and loading it again after a restart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, Signal

from app.runtime_link import RuntimeLink
from runtime.protocol import ErrorCode, MetricsResult, ModelLoadParams, ModelLoadResult, RpcError

LOAD_TIMEOUT_MS = 10 * 60_000


@dataclass(frozen=True)
class ModelChoice:
    path: str
    n_ctx: int = 4096
    n_gpu_layers: int | None = None  # None: Auto, as many layers on the GPU as fit (ModelLoadParams.n_gpu_layers)


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
        self._previous: ModelChoice | None = None
        self._verifying = False
        link.sig_progress.connect(self._on_progress)
        link.sig_ready.connect(self._on_runtime_ready)
        link.sig_crashed.connect(self._on_runtime_crashed)

    @property
    def busy(self) -> bool:
        """A load is on its way, or a failed one is being checked for what it left loaded."""
        return self.loading is not None or self._verifying

    @property
    def display_name(self) -> str:
        """The loaded model's name as the model menu shows it (what its quantizations share); "" while none is loaded."""
        return self._name_of(self.loaded) if self.loaded is not None else ""

    def load(self, choice: ModelChoice) -> None:
        """Load `choice` (queued behind a running reply); a failure keeps the previous model."""
        if self.loaded is not None and self.wanted == choice and self.loading is None:
            return
        self._previous = self.wanted if self.loaded is not None else self._previous
        self.wanted = choice
        self._send_load(choice)

    def ensure_context(self, n_ctx: int) -> None:
        """The conversation asks for another context size: reload the same file with it."""
        if self.wanted is not None and self.wanted.n_ctx != n_ctx:
            self.load(ModelChoice(self.wanted.path, n_ctx, self.wanted.n_gpu_layers))

    def _send_load(self, choice: ModelChoice, first: bool = False) -> None:
        self._last_progress = -1.0
        self.loading = choice
        self.sig_loading.emit(choice.path)
        params = ModelLoadParams(path=choice.path, n_ctx=choice.n_ctx, n_gpu_layers=choice.n_gpu_layers)
        self.link.call(
            "model.load",
            params,
            on_result=lambda result, c=choice: self._on_loaded(c, result),
            on_error=lambda error, c=choice: self._on_load_failed(c, error),
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
        self.sig_failed.emit(choice.path, error.message)
        # The runtime checks a file before it drops the old model, but a failure inside llama.cpp
        # leaves none: go back to the previous choice so the app keeps working.
        previous = self._previous
        self.wanted = previous
        self._verifying = True
        self.link.call("runtime.metrics", None, on_result=lambda m, p=previous: self._after_failure(m, p), on_error=lambda _e: self._end_verify(), timeout_ms=10_000)

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

    def _on_runtime_ready(self, _info) -> None:
        if self.wanted is not None and self.loaded is None and self.loading is None:
            # Ahead of any reply the user asked for while the runtime restarted: it needs the model.
            self._send_load(self.wanted, first=True)
