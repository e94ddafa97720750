"""The engine: one loaded model and the replies generated with it.

It checks a model file before llama.cpp sees it (exists, is GGUF, is whole,
fits in memory), renders conversations with the model's chat template, and
hands replies to the scheduler (runtime/scheduler), whose engine thread alone
touches the llama.cpp context while the model is loaded. A reply's prompt is
rendered and fitted on the caller's thread, which then waits for the reply;
that holds no lock another reply needs, looks at the reply's cancel before
every render, and only a short one holds a wave of prompts open (quick_to_prepare).
Load and unload run only while no reply does (the server's job line, job_slot.py).
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import functools
import hashlib
import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Concatenate, ParamSpec, TypeVar

from runtime.llama import memory
from runtime.engine.chat_template import ChatTemplate
from runtime.engine.context_window import FitCancelled, fit_to_context
from runtime.llama.devices import list_devices
from runtime.llama.generation import GenerationOutcome, GenerationRequest, plain_stepper
from runtime.cores import default_threads
from runtime.llama.llama_model import LlamaModel, LoadSettings
from runtime.engine.offload import ALL, AUTO, OFF, OffloadPlan, load_stepping_down, offload_report, plan_offload
from runtime.llama.sampling import INT32_MAX, INT32_MIN, INT32_SETTINGS, Sampler, SamplerError, SamplingConfig
from runtime.engine.structured import GrammarError, SchemaError, check_grammar, schema_grammar
from runtime.llama.token_alignment import align
from runtime.engine.template_sandbox import TemplateError
from runtime.engine.tools import call_grammar, openai_tools, split_reply, template_messages, tool_format
from runtime.gguf.model_file import check_model_file
from runtime.gguf.reader import GGUFHeader
from runtime.job_slot import PROTOCOL, CancelEvent
from runtime.kvstore.saved_states import SavedStates, store_from_environment
from runtime.scheduler.scheduler import ScheduledReply, Scheduler
from runtime.protocol import (
    ChatGenerateParams,
    ChatMessage,
    ChatGenerateResult,
    Device,
    ErrorCode,
    GPU_DEVICE_TYPES,
    GenerationStats,
    KvClearResult,
    KvStoreInfo,
    MAX_TOP_LOGPROBS,
    MetricsResult,
    ModelLoadParams,
    ModelLoadResult,
    OffloadReport,
    RpcError,
    TokenLogprob,
    ToolCall,
    ToolSpec,
)
from runtime.reasoning.markers import UNNAMED_THINK, ReasoningSyntax, opens_block, syntax_for
from runtime.reasoning.reply import ReasoningPlan, marker_tokens
from runtime.speculative.compat import IncompatibleDraft, check_compatible
from runtime.speculative.session import Speculation
from runtime.engine import pictures

log = logging.getLogger("lokal.engine")


# What a template must render at load, or the model's replies use ChatML (and say so).
TEMPLATE_PROBE = [{"role": "user", "content": "Hello"}]
CHATML = ChatTemplate(None)

# The prompt's last tokens, read for an open reasoning block (markers.opens_block): a generation prompt's header is shorter.
PROMPT_TAIL_TOKENS = 16

# Conversations whose last reply is remembered as written (continue_reply goes on from it exactly; older ones are
# written back from their reasoning and answer, and only the tail that differs is evaluated again).
LAST_REPLIES_KEPT = 256

# A character no message contains: where the next user message would start in the rendered template.
NEXT_TURN_SENTINEL = "\ue000lokal-next-turn\ue000"
# Conversations up to this size render and fit in a few ms (a real chat's turn): a wave of prompts waits for
# them; larger ones are prepared without holding a wave open (Engine.generate).
QUICK_PREPARE_MESSAGES = 256
QUICK_PREPARE_CHARS = 64 << 10


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _exclusive(method: Callable[Concatenate["Engine", _P], _R]) -> Callable[Concatenate["Engine", _P], _R]:
    """Loading and unloading never overlap (the server never runs them beside a reply either: job_slot.py)."""

    @functools.wraps(method)
    def locked(self: "Engine", /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._context_lock:
            return method(self, *args, **kwargs)

    return locked


def model_id_for(path: str, size: int) -> str:
    """A stable id for a model file: its resolved path and size, hashed (cheap, unlike hashing gigabytes)."""
    digest = hashlib.sha256(f"{os.path.realpath(path)}\0{size}".encode()).hexdigest()[:16]
    return f"{os.path.splitext(os.path.basename(path))[0]}-{digest}"


def check_fits(header: GGUFHeader, params: ModelLoadParams, n_batch: int, devices: list[Device], ram_available: int, layers: int | None = None) -> memory.MemoryEstimate:
    """MODEL_TOO_LARGE unless memory.fit_verdict (the catalog's verdict too) says the model fits with these settings,
    `layers` of it on the GPU (None: as params.n_gpu_layers plans it, offload.plan_offload)."""
    # A vision model's projector loads beside it: counted as the catalog and the window count it.
    estimate = memory.estimate_load(header, params.n_ctx, params.type_k, params.type_v, n_batch, flash_attn=params.flash_attn is not False)
    estimate = memory.with_projector(estimate, memory.projector_bytes(params.mmproj_path))
    if layers is None:
        layers = plan_offload(header, params.n_gpu_layers, params.n_ctx, params.type_k, params.type_v, n_batch, devices).layers
    gpu_share = min(layers, header.n_layers + 1) / (header.n_layers + 1)
    verdict = memory.fit_verdict(estimate, devices, ram_available, gpu_share)
    if verdict.short_of == "gpu":
        raise RpcError(
            ErrorCode.MODEL_TOO_LARGE,
            f"the model needs about {verdict.gpu_needed / 2**30:.1f} GiB of GPU memory with these settings, "
            f"but only {verdict.gpu_free / 2**30:.1f} GiB is free: offload fewer layers or use a smaller context",
            {"needed_bytes": verdict.gpu_needed, "available_bytes": verdict.gpu_free, "where": "gpu"},
        )
    if verdict.short_of == "ram":
        raise RpcError(
            ErrorCode.MODEL_TOO_LARGE,
            f"the model needs about {verdict.ram_needed / 2**30:.1f} GiB of memory with a {params.n_ctx}-token context, "
            f"but only {ram_available / 2**30:.1f} GiB is available: pick a smaller quantization or context",
            {"needed_bytes": verdict.ram_needed, "available_bytes": ram_available, "where": "ram"},
        )
    return estimate


def sequences_that_fit(header: GGUFHeader, params: ModelLoadParams, n_batch: int, devices: list[Device]) -> tuple[int, OffloadPlan]:
    """params.n_seq, or as many fewer as memory allows (each sequence may grow to n_ctx), with the layers planned
    on the GPU for that many; MODEL_TOO_LARGE if not even one fits.

    Sequences never cost the GPU a layer: Auto plans as many layers for n_seq sequences as for one, or takes
    fewer sequences. Each sequence's cache sits beside its layers in GPU memory, and a layer moved to the CPU
    slows every reply, where a sequence more only lets another conversation reply at once or stay warm."""
    ram = memory.available_ram()
    one = plan_offload(header, params.n_gpu_layers, params.n_ctx, params.type_k, params.type_v, n_batch, devices)
    for n_seq in range(params.n_seq, 0, -1):
        plan = plan_offload(header, params.n_gpu_layers, params.n_ctx * n_seq, params.type_k, params.type_v, n_batch, devices)
        if plan.layers < one.layers:
            continue
        try:
            check_fits(header, dataclasses.replace(params, n_ctx=params.n_ctx * n_seq), n_batch, devices, ram, plan.layers)
            return n_seq, plan
        except RpcError:
            if n_seq == 1:
                raise
    raise AssertionError("unreachable: n_seq >= 1")


def check_main_gpu(main_gpu: int, devices: list[Device]) -> None:
    """INVALID_PARAMS unless `main_gpu` is one of the GPU devices (index 0 is always allowed: on a machine with
    no GPU device it changes nothing), naming the devices there are; llama.cpp itself would only fail the load."""
    gpus = [d for d in devices if d.type in GPU_DEVICE_TYPES]
    if main_gpu == 0 or 0 < main_gpu < len(gpus):
        return
    there = ", ".join(f"{i}: {d.id or d.name}" for i, d in enumerate(gpus)) or "none"
    raise RpcError(ErrorCode.INVALID_PARAMS, f"params.main_gpu: {main_gpu} is not a GPU device's index here (GPU devices: {there})", {"main_gpu": main_gpu})


def check_draft_file(params: ModelLoadParams, target: GGUFHeader) -> GGUFHeader:
    """The draft model's header, once it is known to draft for `target`; INVALID_MODEL saying why not."""
    assert params.draft_path is not None
    path = os.path.abspath(os.path.expanduser(params.draft_path))
    header = check_model_file(path)
    try:
        check_compatible(target, header)
    except IncompatibleDraft as exc:
        raise RpcError(
            ErrorCode.INVALID_MODEL,
            f"{os.path.basename(path)} cannot be a draft model for {os.path.basename(params.path)}: {exc}",
            {"path": path, "draft_path": path},
        ) from None
    return header


def load_draft(params: ModelLoadParams, target: LlamaModel, header: GGUFHeader) -> tuple[LlamaModel, OffloadReport]:
    """The draft model, in a context of its own with the target's settings, once it is known to fit beside it.

    Its layers go to the GPU in what the target left free: all of them or none when the load asked for
    all or none, else as many as fit (Auto: a layer count chosen for the target means nothing for the draft)."""
    assert params.draft_path is not None
    path = os.path.abspath(os.path.expanduser(params.draft_path))
    requested = params.n_gpu_layers if params.n_gpu_layers in (ALL, OFF) else AUTO
    draft_params = dataclasses.replace(params, path=path, n_gpu_layers=requested)
    devices = list_devices()
    n_ctx_total = params.n_ctx * target.settings.n_seq
    plan = plan_offload(header, requested, n_ctx_total, params.type_k, params.type_v, target.settings.n_batch, devices)
    check_fits(header, draft_params, target.settings.n_batch, devices, memory.available_ram(), plan.layers)
    settings = dataclasses.replace(target.settings, path=path)
    try:
        draft, failed, error = load_stepping_down(lambda layers: LlamaModel(dataclasses.replace(settings, n_gpu_layers=layers), header), plan.layers, requested is AUTO)
    except (ValueError, RuntimeError) as exc:
        raise RpcError(ErrorCode.INVALID_MODEL, f"llama.cpp could not load the draft model {os.path.basename(path)}: {exc}", {"path": path}) from None
    return draft, offload_report(plan, draft.settings.n_gpu_layers, failed, error, devices, list_devices())


@dataclass
class TemplateUse:
    """Which template one request's turns are rendered with: the model's, or ChatML and why (several replies render at once)."""

    fallback: str = ""

    @classmethod
    def after_load(cls, template_error: str | None) -> "TemplateUse":
        return cls(f"{template_error}; using ChatML" if template_error else "")


@dataclass
class WrittenReply:
    """A conversation's last reply as the model wrote it and as it was split: continue_reply goes on from `raw`."""

    raw: str
    reasoning: str
    answer: str


@dataclass
class LoadedModel:
    info: ModelLoadResult
    llama: LlamaModel
    template: ChatTemplate
    speculation: Speculation | None = None  # drafters and measured costs (runtime/speculative)
    # Its reasoning markers (runtime/reasoning/markers.py) and the tokens that stand for them whole.
    reasoning: ReasoningSyntax | None = None
    marker_tokens: frozenset[int] = frozenset()


class Engine:
    def __init__(self) -> None:
        self.loaded: LoadedModel | None = None
        self.scheduler: Scheduler | None = None  # the loaded model's replies, decoded together (runtime/scheduler)
        self._context_lock = threading.RLock()  # load and unload
        self.saved_states = SavedStates(store_from_environment())
        self._context_cuts: dict[str, int] = {}  # per conversation: oldest messages left out (context_window.py)
        self._cuts_lock = threading.Lock()  # prompts are fitted on the replies' own threads (it guards _last_replies too)
        # Per conversation, its last reply as written, for continue_reply: the newest LAST_REPLIES_KEPT (an API serves many).
        self._last_replies: collections.OrderedDict[str, WrittenReply] = collections.OrderedDict()
        # Renders each ended reply's next-turn start and sends it to the scheduler (Scheduler.follow_up), after
        # the reply is answered: neither the answer nor the engine thread waits for a template.
        self._next_turns = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="next-turn")

    @property
    def load_lock(self) -> threading.RLock:
        """Held while a model loads or unloads: who uses the loaded model off the job slot (runtime/documents) takes it."""
        return self._context_lock

    # ---- models ----------------------------------------------------------
    @_exclusive
    def load(self, params: ModelLoadParams, on_progress: Callable[[float], None] | None = None, cancel: threading.Event | None = None) -> ModelLoadResult:
        if params.n_ctx < 16:
            raise RpcError(ErrorCode.INVALID_PARAMS, "params.n_ctx: must be at least 16")
        path = os.path.abspath(os.path.expanduser(params.path))
        header = check_model_file(path)
        if params.n_seq < 1:
            raise RpcError(ErrorCode.INVALID_PARAMS, "params.n_seq: must be at least 1")
        if params.n_gpu_layers is not None and params.n_gpu_layers < -1:
            raise RpcError(ErrorCode.INVALID_PARAMS, "params.n_gpu_layers: must be null (auto), -1 (all), 0 (CPU only) or a number of layers")
        if params.flash_attn is False and params.type_v != "f16":
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.flash_attn: a quantized V cache (type_v {params.type_v}) needs flash attention: leave it on, or make type_v f16")
        devices = list_devices()
        check_main_gpu(params.main_gpu, devices)
        settings = LoadSettings(
            path=path,
            n_ctx=params.n_ctx,
            n_gpu_layers=0,  # planned below
            type_k=params.type_k,
            type_v=params.type_v,
            flash_attn=params.flash_attn,
            n_threads=params.n_threads or default_threads(),
            split_mode=params.split_mode,
            main_gpu=params.main_gpu,
        )
        n_seq, plan = sequences_that_fit(header, params, settings.n_batch, devices)
        settings = dataclasses.replace(settings, n_seq=n_seq, n_gpu_layers=plan.layers)
        draft_header = check_draft_file(params, header) if params.draft_path else None
        self.unload()

        def progress(fraction: float) -> bool:
            if on_progress is not None:
                on_progress(fraction)
            return not (cancel is not None and cancel.is_set())

        started = time.perf_counter()
        devices = list_devices()  # free memory just before the load, after unloading the last model
        try:
            llama, failed, error = load_stepping_down(
                lambda layers: LlamaModel(dataclasses.replace(settings, n_gpu_layers=layers), header, progress),
                plan.layers,
                may_step_down=params.n_gpu_layers is AUTO,
                cancelled=lambda: cancel is not None and cancel.is_set(),
            )
        except (ValueError, RuntimeError) as exc:
            raise RpcError(ErrorCode.INVALID_MODEL, f"llama.cpp could not load {os.path.basename(path)}: {exc}", {"path": path}) from None
        offload = offload_report(plan, llama.settings.n_gpu_layers, failed, error, devices, list_devices())
        draft = None
        try:
            draft, draft_offload = load_draft(params, llama, draft_header) if draft_header is not None else (None, None)
            if params.mmproj_path:
                llama.projector = pictures.load_projector(params.mmproj_path, llama)
        except RpcError:
            if draft is not None:
                draft.close()
            llama.close()
            raise
        load_ms = (time.perf_counter() - started) * 1000
        template, template_error = load_template(header.chat_template, llama)
        info = ModelLoadResult(
            model_id=model_id_for(path, os.path.getsize(path)),
            name=header.name or os.path.basename(path),
            architecture=header.architecture,
            n_params=llama.n_params,
            file_size=os.path.getsize(path),
            quantization=header.quantization,
            n_ctx=llama.n_ctx,
            kv_bytes_per_token=llama.kv_bytes_per_token,
            has_chat_template=template.from_model,
            path=path,
            n_gpu_layers=offload.layers,
            type_k=params.type_k,
            type_v=params.type_v,
            load_ms=load_ms,
            draft_path=draft.settings.path if draft is not None else None,
            n_seq=llama.n_seq,
            chat_template_error=template_error,
            tool_format=tool_format(template.source if template.from_model else None, template.takes_tools),
            offload=offload,
            draft_offload=draft_offload,
            vision=llama.projector is not None,
            flash_attn=llama.flash_attn,
        )
        syntax = syntax_for(template.source if template.from_model else None, lambda text: len(llama.tokenize(text, add_bos=False, special=True)) == 1)
        markers = marker_tokens(syntax, lambda text: llama.tokenize(text, add_bos=False, special=True))
        self.loaded = LoadedModel(info, llama, template, Speculation(llama, draft), syntax, markers)
        self.saved_states.attach(llama)
        self.scheduler = Scheduler(llama, self.saved_states)
        return info

    @_exclusive
    def unload(self) -> bool:
        if self.scheduler is not None:
            self.scheduler.close()  # after the replies it still runs, and their states saved
            self.scheduler = None
        with self._cuts_lock:
            self._context_cuts.clear()
            self._last_replies.clear()
        self.saved_states.detach()
        if self.loaded is None:
            return False
        if self.loaded.speculation is not None:
            self.loaded.speculation.close()
        self.loaded.llama.close()
        self.loaded = None
        return True

    def require_model(self) -> LoadedModel:
        if self.loaded is None:
            raise RpcError(ErrorCode.NO_MODEL_LOADED, "no model is loaded: call model.load first")
        return self.loaded

    # ---- chat ------------------------------------------------------------
    def prompt_tokens(self, params: ChatGenerateParams, use: "TemplateUse | None" = None) -> list[int]:
        loaded = self.require_model()
        if params.prompt_tokens is not None:
            return given_prompt_tokens(loaded.llama, params.prompt_tokens)
        if params.prompt is not None:
            return raw_prompt_tokens(loaded.llama, params.prompt)
        if not params.messages:
            raise RpcError(ErrorCode.INVALID_PARAMS, "params.messages: at least one message is needed")
        if params.continue_reply:
            # The reply goes on where it stopped: the turn before it with its header, then the reply's own text, no end of turn.
            head = self.render(params, params.messages[:-1], add_generation_prompt=True, use=use)
            return tokenize_rendered(loaded, head + self.reply_so_far(params, head))
        return tokenize_rendered(loaded, self.render(params, params.messages, add_generation_prompt=True, use=use))

    def reply_so_far(self, params: ChatGenerateParams, head: str) -> str:
        """The last (assistant) message as the model wrote it, for continue_reply: the text of the reply that ended
        there if this conversation's last reply is that message (the live cache holds exactly it), else its
        reasoning and answer written back in the model's markers."""
        last = params.messages[-1]
        with self._cuts_lock:
            written = self._last_replies.get(params.conversation_id)
        if written is not None and (written.answer, written.reasoning) == (last.content, last.reasoning):
            return written.raw
        if not last.reasoning:
            return last.content
        syntax = self.require_model().reasoning or UNNAMED_THINK
        return written_reply(syntax, last.reasoning, last.content, opens_block(head, syntax))

    def render(self, params: ChatGenerateParams, messages: list[ChatMessage], add_generation_prompt: bool, use: "TemplateUse | None" = None) -> str:
        """The conversation through the model's template; through ChatML, said in `use.fallback`, if that fails."""
        loaded = self.require_model()
        use = use if use is not None else TemplateUse()
        tools = params.tools if params.tool_choice != "none" else []
        options = template_options(params)
        if not use.fallback:
            try:
                return render_with(loaded.template, messages, tools, add_generation_prompt, options)
            except TemplateError as exc:
                if not loaded.template.from_model:
                    raise RpcError(ErrorCode.INVALID_PARAMS, str(exc)) from None
                use.fallback = f"{exc}; using ChatML"
                log.warning("%s", use.fallback)
        try:
            return render_with(CHATML, messages, tools, add_generation_prompt, options)
        except TemplateError as exc:
            raise RpcError(ErrorCode.INVALID_PARAMS, str(exc)) from None

    def reply_format(self, use: "TemplateUse") -> str:
        """The tool-call format of the template this turn was rendered with."""
        loaded = self.require_model()
        template = CHATML if use.fallback or not loaded.template.from_model else loaded.template
        return tool_format(template.source if template.from_model else None, template.takes_tools)

    def fitted_prompt_tokens(self, params: ChatGenerateParams, committed: int = 0, use: "TemplateUse | None" = None, cancel: threading.Event | None = None) -> tuple[list[int], int]:
        """The prompt, with the oldest turns left out if the conversation (and `committed` reply tokens) no longer fits; and how many were."""
        loaded = self.require_model()
        if params.prompt is not None or not params.messages:
            return self.prompt_tokens(params, use), 0
        render = lambda messages: self.prompt_tokens(dataclasses.replace(params, messages=messages), use)
        # The lock guards the remembered cuts only, never a render: one request's fit never waits for another's.
        conversation = params.conversation_id
        with self._cuts_lock:
            cuts = {conversation: self._context_cuts[conversation]} if conversation in self._context_cuts else {}
        fitted = fit_to_context(params.messages, render, loaded.llama.n_ctx, max(1, reply_limit(params, loaded.llama.n_ctx) - committed), cuts, conversation, committed, cancel, loaded.llama.n_ctx_train)
        with self._cuts_lock:
            if conversation in cuts:
                self._context_cuts[conversation] = cuts[conversation]
            else:
                self._context_cuts.pop(conversation, None)
        return fitted

    def expect_reply(self) -> Callable[[], None]:
        """A reply's request is taken in (Scheduler.expect); call the result once it is handed to `generate` or dropped."""
        scheduler = self.scheduler
        return scheduler.expect() if scheduler is not None else (lambda: None)

    def generate(
        self,
        params: ChatGenerateParams,
        cancel: CancelEvent,
        on_text: Callable[[str], None],
        request_id: Any,
        owner: str = PROTOCOL,
        on_wait: Callable[[], None] | None = None,
        on_reasoning: Callable[[str], None] | None = None,
        arrived: Callable[[], None] | None = None,
        on_logprobs: Callable[[list[TokenLogprob]], None] | None = None,
    ) -> ChatGenerateResult:
        """One reply, decoded by the scheduler together with whatever else streams; blocks this (job) thread until it is over.

        The prompt is rendered and fitted here, on the caller's thread, and so is a shorter one if the reply fills
        the context (the scheduler asks: RoomNeeded); `on_text` gets the answer's text and `on_reasoning` the
        reasoning's (runtime/reasoning), `on_logprobs` the answer's tokens' log-probabilities (params.logprobs), from
        the engine thread, and must not block; `on_wait` is called if the
        reply has to wait for a seat; `arrived` (from expect_reply) once the scheduler no longer needs to expect it.
        A cancel ends it where it is (waiting, prefilling, decoding).
        """
        validate_generate(params)
        loaded = self.require_model()
        scheduler = self.scheduler
        assert scheduler is not None
        # Prompts sent together are read in one batch (scheduler.py); a long conversation is prepared outside
        # that, so no wave of other prompts waits for its render: it joins whichever batch is next when ready.
        with scheduler.arriving() if quick_to_prepare(params) else contextlib.nullcontext():
            if arrived is not None:
                arrived()  # `arriving` stands for it now (or, for a long conversation, nothing: no wave waits for it)
            made = self._scheduled_reply(params, cancel, on_text, owner, loaded, on_reasoning, on_logprobs)
            if made is None:
                return ChatGenerateResult(request_id, params.conversation_id, "", "cancelled", GenerationStats())
            reply, use, fmt = made
            waits = scheduler.submit(reply)
        if waits and on_wait is not None:
            on_wait()
        cancel.on_set(lambda: scheduler.cancel(reply))
        while (news := reply.news.get()) is not None:
            prompt, dropped = self._refit(params, news.committed, use, cancel)
            scheduler.make_room(reply, prompt, dropped)
        if reply.error is not None:
            raise reply.error
        outcome = reply.outcome
        assert outcome is not None
        whole = self._remember_reply(params, outcome)
        if reply.follows_up and outcome.finish_reason != "cancelled":  # the scheduler holds the seat for it until then
            if outcome.finish_reason == "length" and outcome.reasoning:
                # A thinking reply cut short is continued more often than answered, and its next turn would rewrite it
                # without the reasoning: the cache keeps it as written, for continue_reply.
                scheduler.follow_up(reply, [])
            else:
                # After the answer, not before it: the next turn's start is rendered off this thread and off the engine's.
                try:
                    self._next_turns.submit(self._send_next_turn, scheduler, reply, params, whole, use)
                except RuntimeError:  # the interpreter is shutting down
                    scheduler.follow_up(reply, [])
        self.saved_states.observe_prefill(outcome.stats)
        text, finish = outcome.text, outcome.finish_reason
        calls: list[ToolCall] = []
        if params.tools and params.tool_choice != "none":
            text, calls = split_reply(outcome.text, fmt, params.tools)
            if calls and finish != "cancelled":
                finish = "tool_calls"
        return ChatGenerateResult(
            request_id, params.conversation_id, text, finish, outcome.stats, calls, outcome.reasoning, logprobs=outcome.logprobs, prompt_logprobs=outcome.prompt_logprobs
        )

    def _remember_reply(self, params: ChatGenerateParams, outcome: GenerationOutcome) -> ChatMessage:
        """The reply as the conversation's last assistant message (with continue_reply: the message it extended,
        extended), remembered as written for a continue_reply to go on from."""
        raw, reasoning, answer = outcome.raw_text, outcome.reasoning, outcome.text
        if params.continue_reply and params.messages:
            last = params.messages[-1]
            with self._cuts_lock:
                written = self._last_replies.get(params.conversation_id)
            before = written.raw if written is not None and (written.answer, written.reasoning) == (last.content, last.reasoning) else None
            raw = (before if before is not None else last.content) + raw
            reasoning, answer = last.reasoning + reasoning, last.content + answer
        if params.prompt is None:
            with self._cuts_lock:
                self._last_replies[params.conversation_id] = WrittenReply(raw, reasoning, answer)
                self._last_replies.move_to_end(params.conversation_id)
                while len(self._last_replies) > LAST_REPLIES_KEPT:
                    self._last_replies.popitem(last=False)
        return ChatMessage("assistant", answer, reasoning=reasoning)

    def _scheduled_reply(
        self,
        params: ChatGenerateParams,
        cancel: CancelEvent,
        on_text: Callable[[str], None],
        owner: str,
        loaded: LoadedModel,
        on_reasoning: Callable[[str], None] | None = None,
        on_logprobs: Callable[[list[TokenLogprob]], None] | None = None,
    ) -> tuple[ScheduledReply, TemplateUse, str] | None:
        """The reply to hand the scheduler, its prompt rendered and fitted to the context, the template use its
        turns are rendered with and the format its tool calls come in (None: cancelled meanwhile)."""
        use = TemplateUse.after_load(loaded.info.chat_template_error)
        try:
            prompt, dropped = self.fitted_prompt_tokens(params, use=use, cancel=cancel)
        except FitCancelled:
            return None
        fmt = self.reply_format(use)
        plan = reasoning_plan(params, loaded, prompt)
        if plan is not None and params.continue_reply:
            head = self.render(params, params.messages[:-1], add_generation_prompt=True, use=use)
            plan = dataclasses.replace(plan, starts_open=opens_block(head, plan.syntax) or plan.starts_open and params.reasoning_format == "deepseek", prefix=self.reply_so_far(params, head))
        request = GenerationRequest(
            prompt=prompt,
            max_tokens=reply_limit(params, loaded.llama.n_ctx),
            sampling=sampling_config(params, loaded.llama, fmt),
            stop=params.stop,
            cancel=cancel,
            on_text=on_text,
            refits=params.prompt is None,
            reasoning=plan,
            on_reasoning=on_reasoning or (lambda _text: None),
            logprobs=params.logprobs,
            on_logprobs=on_logprobs or (lambda _entries: None),
            prompt_logprobs=params.prompt_logprobs,
        )
        stats = GenerationStats(context_dropped_messages=dropped, chat_template_fallback=use.fallback, prompt_image_positions=pictures.positions_in(prompt))
        if plan is not None and plan.budget is not None:
            # The budget writes the closing marker in the model's place: drafts verified against it would be wasted.
            make_stepper = plain_stepper
        else:
            make_stepper = loaded.speculation.steppers_for(params.speculation) if loaded.speculation is not None else plain_stepper
        # A conversation cut to fit has no next turn to prepare: its next prompt is cut again.
        # A scored prompt's state is kept by nobody either: the next prompt scored is read whole again (the cache keeps
        # no logits), and an evaluation run sends thousands, each a state of its own to write to disk.
        keeps = params.keeps_state and not params.prompt_logprobs
        follows_up = params.prompt is None and not dropped and keeps
        reply = ScheduledReply(
            request, make_stepper, owner, params.conversation_id, stats, follows_up=follows_up, saves_state=keeps, drops_cells=not keeps, cache_key=params.cache_key
        )
        return reply, use, fmt

    def _refit(self, params: ChatGenerateParams, committed: int, use: TemplateUse, cancel: CancelEvent) -> tuple[list[int] | None, int]:
        """The conversation with fewer old turns, for a reply that filled the context with `committed` tokens:
        (prompt, messages left out), or (None, 0) when it cannot be (the newest message and the reply fill it alone)."""
        try:
            return self.fitted_prompt_tokens(params, committed, use, cancel)
        except (RpcError, FitCancelled):
            return None, 0
        except Exception:
            log.exception("refitting %r to the context", params.conversation_id)
            return None, 0

    # ---- saved KV states (runtime/kvstore) -------------------------------
    def _send_next_turn(self, scheduler: Scheduler, reply: ScheduledReply, params: ChatGenerateParams, whole: ChatMessage, use: TemplateUse) -> None:
        tokens: list[int] = []
        # A reply that thought is written back without its reasoning by most templates: all of it may be rewritten.
        rewritten = reply.outcome.stats.completion_tokens if reply.outcome is not None and whole.reasoning else 0
        try:
            tokens = self._next_turn_tokens(params, whole, use)
        except Exception:
            log.exception("the next turn's start of %r", params.conversation_id)
        finally:
            scheduler.follow_up(reply, tokens, rewritten)

    def _next_turn_tokens(self, params: ChatGenerateParams, reply: ChatMessage, use: TemplateUse) -> list[int]:
        """What every next turn of this conversation starts with, for the scheduler to evaluate while the user
        reads and types: the conversation so far with the reply, and the template's header of the next user
        message ([] when there is nothing to do).

        The template writes the same tokens after a reply whatever the next message says (ChatML:
        `<|im_end|>\n<|im_start|>user\n`); evaluated now, they are not part of the next turn's time to
        first token, and the saved state covers them too. If the next request is anything else (an edit,
        a regenerate, another conversation), the cache rewinds as usual and this work is simply unused.

        The reply goes in as the next request will send it back, its reasoning apart: a template that drops the
        reasoning of past turns (most do) renders it without, so this is where the cache is rewound to the reply's
        start and its answer evaluated again, now, rather than in the next turn's time to first token.
        """
        loaded = self.loaded
        if loaded is None:
            return []
        history = params.messages[:-1] if params.continue_reply else params.messages
        messages = [*history, reply, ChatMessage("user", NEXT_TURN_SENTINEL)]
        try:
            text = render_with(CHATML if use.fallback else loaded.template, messages, params.tools if params.tool_choice != "none" else [], add_generation_prompt=False, options=template_options(params))
        except TemplateError:
            return []
        cut = text.find(NEXT_TURN_SENTINEL)
        if cut < 0:
            return []
        # The last token may merge with the message text that follows it: leave it to the next turn.
        return tokenize_rendered(loaded, text[:cut])[:-1]

    def kv_store_info(self, wait_for_writes: bool = False) -> KvStoreInfo:
        store = self.saved_states.store
        if wait_for_writes:
            scheduler = self.scheduler
            if scheduler is not None:
                # The replies that just ended have had their after-work: the next turn's header evaluated into
                # their caches and, with a store, their states copied out. Without a store too: where that header
                # lands beside another conversation's cells depends on it.
                scheduler.wait_idle(30)
            if store is not None:
                store.flush(30)
        if store is None:
            return KvStoreInfo(False, "", 0, 0, 0, 0, 0, 0)
        return KvStoreInfo(enabled=True, **store.info())

    def kv_clear(self) -> KvClearResult:
        store = self.saved_states.store
        if store is None:
            return KvClearResult(0, 0)
        scheduler = self.scheduler
        if scheduler is not None:
            # A reply is answered before its state is saved: "clear" also covers the replies already answered.
            scheduler.wait_after_work(30)
        return KvClearResult(*store.clear())

    # ---- figures ---------------------------------------------------------
    def metrics(self, owner: str = PROTOCOL, conversation_id: str | None = None) -> MetricsResult:
        """Memory and KV figures, and the live figures of `owner`'s newest streaming reply (never another owner's);
        with `conversation_id`, of that conversation's only: the window shows the conversation on screen, which
        is not always the one that started last."""
        loaded, scheduler = self.loaded, self.scheduler
        total = sum(len(seq.tokens) for seq in loaded.llama.sequences) if loaded else 0
        streaming = scheduler.streaming(owner) if scheduler is not None else []
        if conversation_id is not None:
            streaming = [reply for reply in streaming if reply.conversation_id == conversation_id]
        newest = max(streaming, key=lambda reply: reply.submitted) if streaming else None
        return MetricsResult(
            rss_bytes=memory.rss_bytes(),
            model_id=loaded.info.model_id if loaded else None,
            n_ctx=loaded.info.n_ctx if loaded else 0,
            kv_tokens_used=scheduler.context_used(owner, conversation_id) if scheduler is not None else 0,
            kv_bytes_used=total * loaded.info.kv_bytes_per_token if loaded else 0,
            devices=list_devices(),
            generation=newest.stats if newest is not None else None,
            kv_tokens_total=total,
            n_seq=loaded.llama.n_seq if loaded else 0,
            offload=loaded.info.offload if loaded else None,
        )


def load_template(source: str | None, llama: LlamaModel) -> tuple[ChatTemplate, str | None]:
    """The model's chat template, or ChatML and the reason the model's cannot be used (it does not parse or render)."""
    bos = llama.token_text(llama.bos_token) if llama.bos_token >= 0 else ""
    eos = llama.token_text(llama.eos_token) if llama.eos_token >= 0 else ""
    if not source:
        return ChatTemplate(None, bos, eos), None
    try:
        template = ChatTemplate(source, bos, eos)
        template.render(TEMPLATE_PROBE)
        return template, None
    except TemplateError as exc:
        log.warning("%s; falling back to ChatML", exc)
        return ChatTemplate(None, bos, eos), str(exc)


def quick_to_prepare(params: ChatGenerateParams) -> bool:
    """Whether the prompt renders and fits in moments (a wave of prompts may wait for it: scheduler.arriving)."""
    if params.prompt is not None:
        return len(params.prompt) <= QUICK_PREPARE_CHARS
    return len(params.messages) <= QUICK_PREPARE_MESSAGES and sum(len(m.content) for m in params.messages) <= QUICK_PREPARE_CHARS


def render_with(template: ChatTemplate, messages: list[ChatMessage], tools: list[ToolSpec], add_generation_prompt: bool, options: dict[str, Any] | None = None) -> str:
    dicts = template_messages(pictures.with_markers(messages), tools, template.takes_tools)
    return template.render(dicts, add_generation_prompt=add_generation_prompt, tools=openai_tools(tools) if tools and template.takes_tools else None, options=options)


def template_options(params: ChatGenerateParams) -> dict[str, Any]:
    """The reasoning switches a template may read (chat_template_kwargs): enable_thinking, off too for a budget of 0
    (as llama-server does), and reasoning_effort."""
    enable = params.enable_thinking
    if enable is None and params.reasoning_budget == 0:
        enable = False
    return {"enable_thinking": enable, "reasoning_effort": params.reasoning_effort}


def written_reply(syntax: ReasoningSyntax, reasoning: str, answer: str, opened: bool) -> str:
    """A reply's reasoning and answer in the model's own markers (the prompt `opened` the block or not)."""
    if syntax.kind == "harmony":
        text = syntax.open + reasoning
        return text + syntax.closing + answer if answer else text
    text = ("" if opened else syntax.open + "\n") + reasoning
    return text + syntax.closing + answer if answer else text


def reasoning_plan(params: ChatGenerateParams, loaded: LoadedModel, prompt: list[int]) -> ReasoningPlan | None:
    """How this reply's reasoning is kept apart (None: reasoning_format "none", or a raw prompt: the text as written)."""
    if params.reasoning_format == "none" or params.prompt is not None:
        return None
    syntax = loaded.reasoning or UNNAMED_THINK
    tail = b"".join(loaded.llama.piece(token, special=True) for token in prompt[-PROMPT_TAIL_TOKENS:]).decode("utf-8", "replace")
    # deepseek: the reply is reasoning from its start even where the template did not open a block (DeepSeek-R1
    # itself often leaves out the opening <think>); a <think> it writes anyway is read as the marker.
    starts_open = opens_block(tail, syntax) or (params.reasoning_format == "deepseek" and syntax.kind == "think")
    budget = None if params.reasoning_budget is None or params.reasoning_budget < 0 else params.reasoning_budget
    closing = loaded.llama.tokenize(syntax.closing, add_bos=False, special=True) if budget is not None else []
    return ReasoningPlan(syntax, starts_open, budget, closing, loaded.marker_tokens)


def sampling_config(params: ChatGenerateParams, llama: LlamaModel, reply_format: str) -> SamplingConfig:
    """The sampler chain's settings for a request; INVALID_PARAMS naming the field that cannot be used."""
    constraints = [name for name, given in (("grammar", params.grammar is not None), ("json_schema", params.json_schema is not None), ("tool_choice", bool(params.tools) and (params.tool_choice == "required" or params.tool_name is not None))) if given]
    if len(constraints) > 1:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.{constraints[1]}: only one of grammar, json_schema and a required tool call can constrain a reply")
    grammar = params.grammar
    if params.json_schema is not None:
        try:
            grammar = schema_grammar(params.json_schema)
        except SchemaError as exc:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.json_schema: {exc}") from None
    if params.tool_name is not None and params.tool_name not in {t.name for t in params.tools}:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.tool_name: {params.tool_name!r} is not one of the tools")
    if params.tools and (params.tool_choice == "required" or params.tool_name is not None):
        grammar = call_grammar(params.tools, reply_format, params.tool_name)
    if grammar is not None:
        try:
            check_grammar(grammar)  # before llama.cpp's parser, which would overflow its stack or exhaust memory
        except GrammarError as exc:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.{constraints[0]}: {exc}") from None
    for name in ("penalty_last_n", "dry_penalty_last_n"):
        # llama.cpp allocates the whole window up front: no wider than the context, whose tokens are all it can hold.
        if getattr(params, name) > llama.n_ctx:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.{name}: must be at most the context size ({llama.n_ctx}), or -1 for the whole context")
    for bias in params.logit_bias:
        if not 0 <= bias.token < llama.n_vocab:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.logit_bias: token {bias.token} is not in the vocabulary (0..{llama.n_vocab - 1})")
    config = SamplingConfig(
        temperature=params.temperature,
        top_p=params.top_p,
        top_k=params.top_k,
        seed=params.seed,
        min_p=params.min_p,
        typical_p=params.typical_p,
        repeat_penalty=params.repeat_penalty,
        frequency_penalty=params.frequency_penalty,
        presence_penalty=params.presence_penalty,
        penalty_last_n=llama.n_ctx if params.penalty_last_n == -1 else params.penalty_last_n,
        dry_multiplier=params.dry_multiplier,
        dry_base=params.dry_base,
        dry_allowed_length=params.dry_allowed_length,
        dry_penalty_last_n=llama.n_ctx if params.dry_penalty_last_n == -1 else params.dry_penalty_last_n,
        logit_bias=tuple((b.token, b.bias) for b in params.logit_bias),
        grammar=grammar,
    )
    if grammar is not None:
        try:
            Sampler(SamplingConfig(grammar=grammar), llama).close()  # parsed now, before the prompt is evaluated
        except SamplerError as exc:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.grammar: {exc}") from None
    return config


def reply_limit(params: ChatGenerateParams, n_ctx: int) -> int:
    """The reply's token limit: max_tokens, or (None) the context, which no reply outgrows (it ends with "length" when full)."""
    return params.max_tokens if params.max_tokens is not None else n_ctx


def validate_generate(params: ChatGenerateParams) -> None:
    for name in ("temperature", "top_p", "min_p", "typical_p", "repeat_penalty", "frequency_penalty", "presence_penalty", "dry_multiplier", "dry_base"):
        if not math.isfinite(getattr(params, name)):
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.{name}: must be a finite number")
    if not all(math.isfinite(b.bias) for b in params.logit_bias):
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.logit_bias: biases must be finite numbers")
    if not 0.0 <= params.min_p <= 1.0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.min_p: must be in [0, 1]")
    if not 0.0 < params.typical_p <= 1.0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.typical_p: must be in (0, 1]")
    if params.repeat_penalty <= 0.0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.repeat_penalty: must be above 0 (1 is off)")
    for name in ("penalty_last_n", "dry_penalty_last_n"):
        if getattr(params, name) < -1:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.{name}: must be -1 (the whole context) or more")
    for name in INT32_SETTINGS:
        # ctypes passes these as int32 and silently drops the higher bits: 2**32 + 5 would become 5.
        if not INT32_MIN <= getattr(params, name) <= INT32_MAX:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.{name}: must be at most {INT32_MAX}")
    if params.dry_multiplier < 0 or params.dry_allowed_length < 0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.dry_multiplier and params.dry_allowed_length: must not be negative")
    if params.tool_choice == "required" and not params.tools:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.tool_choice: 'required' needs tools")
    if params.max_tokens is not None and params.max_tokens < 0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.max_tokens: must not be negative (null: until the model stops, within the context)")
    if params.reasoning_budget is not None and params.reasoning_budget < -1:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.reasoning_budget: {params.reasoning_budget} is not a budget: -1 or null (unlimited), 0 (no thinking) or a number of tokens")
    if params.continue_reply and (params.prompt is not None or not params.messages or params.messages[-1].role != "assistant"):
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.continue_reply: the last message must be the assistant message to continue")
    if params.temperature < 0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.temperature: must not be negative")
    if not 0.0 < params.top_p <= 1.0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.top_p: must be in (0, 1]")
    if params.top_k < 0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.top_k: must not be negative")
    if params.prompt_tokens is not None and params.prompt is None:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.prompt_tokens: only with `prompt`, their text")
    if params.prompt_logprobs and params.prompt is None:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.prompt_logprobs: only with `prompt` (raw text; a conversation's turns are not scored)")
    if params.logprobs is not None and not 0 <= params.logprobs <= MAX_TOP_LOGPROBS:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.logprobs: the alternatives per token must be 0 to {MAX_TOP_LOGPROBS} (null: no log-probabilities)")


def tokenize_rendered(loaded: LoadedModel, text: str) -> list[int]:
    """Token ids of text the chat template rendered, the pictures' positions spliced in (runtime/engine/pictures.py)."""
    bos_text = loaded.template.bos_token
    # Many templates write the BOS token themselves; a second one would change the model's output.
    add_bos = loaded.llama.adds_bos and not (bos_text and text.startswith(bos_text))
    return pictures.tokenize(loaded.llama, text, lambda piece, first: loaded.llama.tokenize(piece, add_bos=add_bos and first, special=True))


def given_prompt_tokens(llama: LlamaModel, tokens: list[int]) -> list[int]:
    """A raw prompt given as token ids (ChatGenerateParams.prompt_tokens): each must be one of the model's."""
    if not tokens:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.prompt_tokens: must not be empty")
    stray = next((i for i, token in enumerate(tokens) if not 0 <= token < llama.n_vocab), None)
    if stray is not None:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.prompt_tokens[{stray}]: {tokens[stray]} is not a token of this model (0 to {llama.n_vocab - 1})")
    return list(tokens)


def raw_prompt_tokens(llama: LlamaModel, prompt: str) -> list[int]:
    """A raw prompt (no chat template), tokenized as llama.cpp's server does: BOS if the model wants one, special tokens parsed."""
    tokens = llama.tokenize(prompt, add_bos=llama.adds_bos, special=True)
    if not tokens:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.prompt: must not be empty")
    return tokens
