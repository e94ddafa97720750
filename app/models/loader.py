"""ModelLoader: the window's loads, with the model's stored load settings (runtime/models/load_settings.py,
the same file `lokal chat` and `lokal serve` read) and the draft model they name.

Working a load out reads files (the settings file, the model's header for its trained context and
memory estimate, the headers of the models that could draft for it), so it runs on a worker thread
and the answer comes back as a signal: the window never waits on the disk. A newer load replaces
one still being worked out. A conversation's own context size goes in place of the model's; when
it does not fit this machine's memory, the window is told (sig_context_capped) and the model
loads with the most that fits, rather than failing in llama.cpp. A context longer than the model was
trained for (its GGUF's context_length), asked for by a conversation or by the load settings, loads as the
trained one, and the window is told (sig_context_beyond_training): past it the model's replies fall apart.
A vision model loads with the projector the runtime's model list pairs with it (LocalModel.mmproj), and the
fit counts the projector's weights.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
from dataclasses import dataclass, field
from typing import Optional

from PySide6.QtCore import QObject, Signal

from app.models.local_model import LocalModels
from app.models.session import ModelChoice, ModelSession
from runtime.gguf.reader import GGUFError, GGUFHeader
from runtime.models import drafts, load_settings, local
from runtime.models.drafts import DraftOption
from runtime.models.load_settings import LoadSettings
from runtime.protocol import LocalModel

log = logging.getLogger("lokal.models")


@dataclass
class Prepared:
    """A load worked out: what to load, the settings it came from, and the models that could draft for it."""

    choice: ModelChoice
    settings: LoadSettings
    drafts: list[DraftOption] = field(default_factory=list)
    auto_draft: Optional[str] = None  # what "auto" picks for this model
    capped_from: Optional[int] = None  # the conversation's context, when it did not fit (choice.n_ctx is what does)
    beyond_training: Optional[int] = None  # the context asked for, when longer than the model was trained for (capped to that)
    sampling: dict[str, float | int] = field(default_factory=dict)  # the model file's recommended sampling (general.sampling.*)
    header: GGUFHeader | None = None  # the model's GGUF header (runtime/gguf/reader.py), for the fit of another context size
    candidates: list[tuple[str, int]] = field(default_factory=list)  # the (path, size) of the files on disk it was worked out with, sorted
    projector_size: int = 0  # the bytes of choice.mmproj_path, for the fit of another context size (read on the worker thread)


class ModelLoader(QObject):
    sig_problem = Signal(str, str)  # path, why its load settings cannot be used (the message names the field)
    sig_context_capped = Signal(int, int)  # the conversation's context, the most that fits: said before the load
    sig_context_beyond_training = Signal(int, int)  # the context asked for, the model's trained context it loads with instead
    sig_prepared = Signal(object)  # Prepared, for the model now wanted
    _sig_done = Signal(int, str, object)  # from the worker: (ticket, path, Prepared or the exception)

    def __init__(self, session: ModelSession, local_models: LocalModels, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self.local_models = local_models
        self.prepared: Prepared | None = None  # the last load worked out (its settings, its draft options)
        self._last: tuple[str, int | None] | None = None
        self._ticket = 0
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-settings")
        self._sig_done.connect(self._on_done)
        session.context_fit = self.fit_context

    def load(self, path: str, conversation_n_ctx: int | None = None) -> None:
        """Load the file at `path` with its stored settings (and the conversation's context size, if it sets one)."""
        self._last = (path, conversation_n_ctx)
        self._ticket += 1
        self.session.preparing += 1
        candidates = [(f.path, f.size) for f in self.local_models.files]
        listed = self.local_models.file_for(path)
        same_file = self.local_models.paths_of(listed) if listed is not None else []
        ticket = self._ticket
        self._pool.submit(self._work, ticket, path, conversation_n_ctx, candidates, same_file, listed)

    def refresh(self, conversation_n_ctx: int | None = None) -> None:
        """The models on disk changed: work the last load out again (a new draft for "auto", say); the session
        loads only if the outcome differs from what it holds. Nothing to do when the list is the one it had."""
        if self._last is None or self.session.preparing != 0:
            return
        prepared = self.prepared
        files = sorted((f.path, f.size) for f in self.local_models.files)
        listed = self.local_models.file_for(self._last[0])
        projector_changed = listed is not None and prepared is not None and listed.mmproj != prepared.choice.mmproj_path  # a projector downloaded or removed
        if prepared is not None and prepared.choice.path == self._last[0] and prepared.candidates == files and not projector_changed:
            return
        self.load(self._last[0], conversation_n_ctx)

    def stop(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _work(self, ticket: int, path: str, conversation_n_ctx: int | None, candidates: list[tuple[str, int]], same_file: list[str],
              listed: LocalModel | None) -> None:
        outcome: Prepared | Exception
        try:
            # The list's projector (LocalModel.mmproj); before the list has come (the model the window opens with),
            # the one the list will name, by its own rule: loading the model again with it once the list came would cost a load.
            mmproj = listed.mmproj if listed is not None else local.projector_for(path)
            outcome = prepare(path, conversation_n_ctx, candidates, same_file, mmproj)
        except Exception as exc:  # a settings error names its field; anything else is said as it is
            outcome = exc
        try:
            self._sig_done.emit(ticket, path, outcome)
        except RuntimeError:
            pass  # the window closed meanwhile: nobody waits for this load any more

    def _on_done(self, ticket: int, path: str, outcome: Prepared | Exception) -> None:
        self.session.preparing -= 1
        if ticket != self._ticket:
            return  # a newer load replaced this one
        if isinstance(outcome, Exception):
            log.warning("cannot work out the load: %s", outcome)
            self.sig_problem.emit(path, str(outcome))
            return
        self.prepared = outcome
        self.session.speculation = outcome.settings.speculation
        if outcome.beyond_training is not None and outcome.header is not None:
            self.sig_context_beyond_training.emit(outcome.beyond_training, outcome.header.context_length)
        if outcome.capped_from is not None:
            self.sig_context_capped.emit(outcome.capped_from, outcome.choice.n_ctx)
        self.sig_prepared.emit(outcome)
        self.session.load(outcome.choice)

    def fit_context(self, n_ctx: int) -> int:
        """The most of `n_ctx` that fits this machine's memory with the model now wanted; when that is less,
        sig_context_capped says so first (a conversation's own context size, before its reload)."""
        prepared = self.prepared
        if prepared is None or prepared.header is None:
            return n_ctx
        trained = within_training(prepared.header, n_ctx)
        if trained < n_ctx:
            self.sig_context_beyond_training.emit(n_ctx, trained)
            n_ctx = trained
        fits = fitting_context(prepared.header, n_ctx, prepared.settings, prepared.projector_size)
        if fits < n_ctx:
            self.sig_context_capped.emit(n_ctx, fits)
        return fits

    def save(self, path: str, settings: LoadSettings) -> None:
        """Store the settings of the model file at `path` (load_settings.write, the one writer)."""
        load_settings.write(path, settings)


def prepare(path: str, conversation_n_ctx: int | None, candidates: list[tuple[str, int]], same_file: list[str], mmproj: str | None = None) -> Prepared:
    """Work a load out (on the worker thread): settings, context, draft model, and `mmproj`, the model's projector if it has one.

    A file this cannot read as a model (missing, not a GGUF) is still asked of the runtime as it is: its
    model.load refuses it in the words it uses for any file (shown as "Could not load …"), and the loaded
    model stays. Only a stored setting that cannot be used is the loader's own problem (SettingsError)."""
    try:
        header = header_of(path)
    except (GGUFError, OSError) as exc:
        log.info("%s is not a readable model file (%s): the runtime's load will say why", path, exc)
        return Prepared(ModelChoice(path=path, mmproj_path=mmproj), LoadSettings(), candidates=sorted(candidates))
    settings = load_settings.read_for(path)
    stored_n_ctx = settings.n_ctx or load_settings.default_context(header, settings.type_k, settings.type_v, flash_attn=settings.flash_attn)
    from runtime.llama import memory

    model_n_ctx = within_training(header, stored_n_ctx)
    beyond_training = stored_n_ctx if model_n_ctx < stored_n_ctx else None
    projector_size = memory.projector_bytes(mmproj)
    n_ctx, capped_from = model_n_ctx, None
    if conversation_n_ctx:  # the conversation's context is the one in effect
        asked = within_training(header, conversation_n_ctx)
        beyond_training = conversation_n_ctx if asked < conversation_n_ctx else None
        n_ctx = fitting_context(header, asked, settings, projector_size)
        capped_from = asked if n_ctx < asked else None
    options = drafts.options(path, candidates, same_file, header_of)
    auto = drafts.auto_choice(os.path.getsize(path), options)
    draft_path = {"auto": auto.path if auto is not None else None, "none": None}.get(settings.draft, settings.draft)
    params = load_settings.load_params(path, settings, draft_path, header=header, n_ctx=n_ctx)
    choice = ModelChoice(
        path=path, n_ctx=params.n_ctx, n_gpu_layers=load_settings.offload_layers(settings.gpu_offload), type_k=params.type_k,
        type_v=params.type_v, flash_attn=params.flash_attn, n_threads=params.n_threads, n_seq=params.n_seq, draft_path=params.draft_path, model_n_ctx=model_n_ctx,
        split_mode=params.split_mode, main_gpu=params.main_gpu, mmproj_path=mmproj,
    )
    return Prepared(choice, settings, options, auto.path if auto is not None else None, capped_from, beyond_training, load_settings.sampling_defaults(header),
                    header, sorted(candidates), projector_size)


HEADERS_KEPT = 64  # a vocabulary's tokens are a few MB per header
_headers: dict[tuple[str, int, int], GGUFHeader] = {}  # parsed GGUF headers by (real path, size, mtime): the worker thread's own


def header_of(path: str) -> GGUFHeader:
    """The file's GGUF header, parsed once per version of the file: parsing is CPU work in this process (the
    GUI's), so a list read again (every scan) costs nothing."""
    from runtime.gguf.reader import read_file_header

    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_size, stat.st_mtime_ns)
    header = _headers.get(key)
    if header is None:
        if len(_headers) >= HEADERS_KEPT:
            _headers.clear()
        header = _headers[key] = read_file_header(path)
    return header


def within_training(header: GGUFHeader, n_ctx: int) -> int:
    """`n_ctx`, or the context the model was trained for where that is shorter (a file that does not say: `n_ctx`)."""
    return min(n_ctx, header.context_length) if header.context_length else n_ctx


def fitting_context(header: GGUFHeader, n_ctx: int, settings: LoadSettings, projector_size: int = 0) -> int:
    """`n_ctx` if the model fits memory with it (the fit model.load applies, with the projector's weights as the
    catalog counts them), else the model's own default (its trained context as far as memory allows): never the
    most memory could just hold, which would leave nothing for the rest of the machine."""
    from runtime.llama import memory

    estimate = memory.with_projector(memory.estimate_load(header, n_ctx, settings.type_k, settings.type_v, flash_attn=settings.flash_attn is not False), projector_size)
    verdict = memory.fit_verdict(estimate, [], memory.available_ram())
    if verdict.label != "too_big":
        return n_ctx
    return min(n_ctx, settings.n_ctx or load_settings.default_context(header, settings.type_k, settings.type_v, flash_attn=settings.flash_attn))


def needs_reload(before: LoadSettings, after: LoadSettings) -> list[str]:
    """The changed settings that take a reload to apply (speculation applies from the next reply)."""
    return [name for name in after.changed_from(before) if name not in load_settings.RELOAD_FREE]
