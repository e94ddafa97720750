"""One reply: reuse the cached prefix, prefill the rest of the prompt, decode token by token.

The KV cache is never recomputed for tokens it already holds: the prompt is
compared with `model.tokens` and only the tokens after the longest common
prefix are evaluated. A regenerate or an edit of an earlier message simply
has a shorter common prefix, so the cache is rewound to it.
"""

from __future__ import annotations

import enum
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

import numpy as np
import psutil

from runtime.llama.llama_model import DecodeAborted, DecodeError, LlamaModel, Slice, as_sequence
from runtime.llama.llama_model import KvSequence as Seq
from runtime.llama.logprobs import LogprobReader
from runtime.llama.sampling import Sampler, SamplingConfig
from runtime.llama.text_stream import TextStream
from runtime.llama.token_alignment import align
from runtime.protocol import ContextOverflow, FinishReason, GenerationStats, TokenLogprob
from runtime.reasoning.reply import ReasoningPlan, ReplyReasoning
from runtime.vision import positions

# Prefill is split so a cancel is seen between chunks too; llama.cpp's abort callback covers the inside of one.
PREFILL_CHUNK = 512
# While other replies stream, a new prompt joins each step with at most this many tokens (chunked prefill):
# the streams slow down for a while instead of stopping until the whole prompt is read.
PREFILL_CHUNK_WHILE_STREAMING = 64
# A prompt read for its tokens' log-probabilities keeps every row of logits: chunks of this many bound that
# buffer (128 rows of a 152k-token vocabulary: 78 MB).
SCORED_PREFILL_CHUNK = 128


@dataclass
class GenerationRequest:
    prompt: Sequence[int]
    max_tokens: int
    sampling: SamplingConfig
    stop: Sequence[str] = ()
    cancel: threading.Event = field(default_factory=threading.Event)
    # Where the reply's text goes, called by whoever drives the steps (the scheduler's loop, `generate`) with
    # each step's text: an output channel that must not block (runtime/server.py queues it for its writer).
    on_text: Callable[[str], None] = lambda text: None
    # When the reply fills the context it waits (Phase.NEEDS_ROOM) for a shorter prompt, fewer old turns
    # (ReplyRun.make_room; runtime/engine/context_window.py); else it ends there with "length".
    refits: bool = False
    # The reply's reasoning kept apart from its answer (runtime/reasoning); None: all of it is text, as written.
    reasoning: ReasoningPlan | None = None
    # Where the reasoning goes as it streams (on_text then gets the answer only); called just before on_text.
    on_reasoning: Callable[[str], None] = lambda text: None
    # Each answer token's log-probability, with this many alternatives (runtime/llama/logprobs.py); None: not read.
    logprobs: int | None = None
    # Where they go as they stream, called just before on_text (a stop string may hold their text back a while).
    on_logprobs: Callable[[list[TokenLogprob]], None] = lambda entries: None
    # Each prompt token's log-probability given the ones before it (with `logprobs` alternatives): the prompt is
    # read again whole, every row kept (ReplyRun.prompt_logprobs).
    prompt_logprobs: bool = False


@dataclass
class GenerationOutcome:
    text: str  # the answer (without reasoning: the whole reply)
    finish_reason: FinishReason
    stats: GenerationStats
    completion: list[int]
    reasoning: str = ""
    raw_text: str = ""  # the reply as the model wrote it, markers and reasoning included
    logprobs: list[TokenLogprob] = field(default_factory=list)  # the answer's tokens' (GenerationRequest.logprobs)
    prompt_logprobs: list[TokenLogprob] = field(default_factory=list)  # the prompt's after its first (GenerationRequest.prompt_logprobs)


class TokenSink:
    """Receives sampled tokens in order and decides when the reply is over.

    Plain and speculative decoding both feed it, so end-of-generation tokens,
    stop strings, max_tokens, a full context and cancel are handled in one place.
    """

    def __init__(self, model: LlamaModel | Seq, request: GenerationRequest, stats: GenerationStats, started: float):
        self.model = model
        self.request = request
        self.stats = stats
        self.stream = TextStream(request.stop)
        self.completion: list[int] = []
        self.finish_reason: FinishReason | None = None
        self.context_full = False  # the reply stopped because the context had no room for its next token
        self.unsent = ""  # text streamed since the driver last took it (take_text)
        self.unsent_reasoning = ""
        self.reasoning = ReplyReasoning(request.reasoning, stats, started) if request.reasoning is not None else None
        self._marker_tokens = request.reasoning.marker_tokens if request.reasoning is not None else frozenset()
        self._started = started
        self._first_token_at: float | None = None
        self._logprobs = LogprobReader(request.logprobs, lambda t: model.piece(t, special=True)) if request.logprobs is not None else None
        self.token_logprobs: list[TokenLogprob] = []  # one per token of `completion` (with request.logprobs)
        self._logprobs_sent = 0

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    @property
    def reads_logprobs(self) -> bool:
        """Whether accept() needs the token's logits row (GenerationRequest.logprobs)."""
        return self._logprobs is not None

    def accept(self, token: int, row: np.ndarray | None) -> bool:
        """Take one sampled token, and the logits row it was sampled from (None unless reads_logprobs); False once
        the reply has finished (the token may not be in it)."""
        now = time.perf_counter()
        if self._first_token_at is None:
            self._first_token_at = now
            self.stats.ttft_ms = (now - self._started) * 1000
        if self.model.is_end_of_generation(token):
            self.finish_reason = "stop"
            return False
        self.completion.append(token)
        self.stats.completion_tokens = len(self.completion)
        if self._logprobs is not None:
            assert row is not None, "a reply that reads log-probabilities is given each token's row"
            self.token_logprobs.append(self._logprobs.read(row, token))
        text = self.stream.push(self.model.piece(token, special=token in self._marker_tokens))
        if self.reasoning is not None:
            parts = self.reasoning.take(text)
            self.unsent += parts.answer
            self.unsent_reasoning += parts.reasoning
        else:  # no reasoning kept apart: every token is the answer's
            self.unsent += text
            self.stats.answer_tokens = len(self.completion)
            self.stats.ttfat_ms = self.stats.ttfat_ms or self.stats.ttft_ms
        if self.stream.stopped:
            self.finish_reason = "stop"
        elif len(self.completion) >= self.request.max_tokens:
            self.finish_reason = "length"
        elif len(self.model.tokens) >= self.model.n_ctx:  # no room to evaluate this token
            self.finish_reason = "length"
            self.context_full = self.stats.context_full = True
        elif self.request.cancel.is_set():
            self.finish_reason = "cancelled"
        if len(self.completion) > 1:
            self.stats.decode_tokens_per_s = (len(self.completion) - 1) / max(now - self._first_token_at, 1e-9)
        return self.finish_reason is None

    def steer(self, sampled: int) -> int:
        """The token the reply takes: the sampled one, unless a reasoning budget is writing the closing marker."""
        return self.reasoning.steer(sampled) if self.reasoning is not None else sampled

    def close(self) -> None:
        text = self.stream.finish()
        if self.reasoning is None:
            self.unsent += text
            return
        parts = self.reasoning.take_final(text)
        self.unsent += parts.answer
        self.unsent_reasoning += parts.reasoning

    def take_text(self) -> str:
        """The answer streamed since the last call, for the driver to hand on (GenerationRequest.on_text)."""
        text, self.unsent = self.unsent, ""
        return text

    def take_reasoning(self) -> str:
        """The reasoning streamed since the last call (GenerationRequest.on_reasoning)."""
        text, self.unsent_reasoning = self.unsent_reasoning, ""
        return text

    def answer_logprobs(self) -> list[TokenLogprob]:
        """The log-probabilities of the answer's tokens so far: the reply's last `answer_tokens`, reasoning coming first."""
        return self.token_logprobs[len(self.completion) - self.stats.answer_tokens :]

    def take_logprobs(self) -> list[TokenLogprob]:
        """The answer's tokens' log-probabilities since the last call (GenerationRequest.on_logprobs)."""
        if self._logprobs is None:
            return []
        start = max(self._logprobs_sent, len(self.completion) - self.stats.answer_tokens)
        if start >= len(self.token_logprobs):
            return []  # nothing new in the answer; tokens not yet known to be answer or reasoning may still turn out answer
        self._logprobs_sent = len(self.token_logprobs)
        return self.token_logprobs[start:]


def prepare_prompt(model: LlamaModel | Seq, prompt: Sequence[int], stats: GenerationStats, reuse_cache: bool = True) -> list[int]:
    """Rewind the cache to the longest prefix it shares with `prompt` (without `reuse_cache`: empty it); returns
    the tokens still to evaluate."""
    if len(prompt) >= model.n_ctx:
        raise ContextOverflow(len(prompt), model.n_ctx, model.n_ctx_train).error(f"the conversation is {len(prompt)} tokens long and does not fit the context of {model.n_ctx} tokens")
    reuse = model.common_prefix(prompt) if reuse_cache else 0
    if reuse == len(prompt):
        reuse -= 1  # the last prompt token is evaluated again to get the logits to sample from
    kept = model.truncate(positions.whole_images(prompt, reuse))
    stats.prompt_tokens = len(prompt)
    stats.prompt_tokens_restored = min(stats.prompt_tokens_restored, kept)  # set by a restore just before
    stats.prompt_tokens_reused = kept - stats.prompt_tokens_restored
    stats.prompt_tokens_evaluated = len(prompt) - kept
    return list(prompt[kept:])


class Stepper(Protocol):
    """Decodes one reply a step at a time, so that one llama_decode call can carry a step of several replies.

    `begin` takes the first token from the logits the prompt left; then, each step, `plan` says what
    this reply adds to the batch (its newest token, perhaps with a draft after it) and, once the batch
    is decoded, `settle` reads this reply's logits rows, hands the tokens to the sink and rewinds
    what was not accepted. Both return False once the reply is over. `expected` is what the planned
    step should yield, for the replies that plan after it in the same batch (runtime/speculative/adaptive.py).
    """

    def begin(self) -> bool: ...

    def plan(self, batch: "BatchSoFar") -> Slice: ...

    def expected(self) -> float: ...

    def settle(self, step: "StepTiming") -> bool: ...


@dataclass
class BatchSoFar:
    """What the batch holds before a reply plans its part: tokens, and the replies' tokens expected from them."""

    tokens: int = 0
    expected: float = 0.0
    room: int = 1 << 30  # tokens this reply's part may have at most (the batch's capacity left)


@dataclass
class StepTiming:
    """The decode this step took part in: how many tokens it carried, in how many seconds (None: not a measurement)."""

    tokens: int
    seconds: float | None


class PlainStepper:
    """One target forward pass per token."""

    def __init__(self, model: LlamaModel | Seq, sampler: Sampler, sink: "TokenSink", cannot_rewind: str = ""):
        """`cannot_rewind`: the architecture of a model whose cache cannot be rewound, where speculation was asked for."""
        self.model = model
        self.sampler = sampler
        self.sink = sink
        sink.stats.speculation = "off"
        sink.stats.speculation_cannot_rewind = cannot_rewind
        if cannot_rewind:
            sink.stats.speculation_notice = f"speculative decoding is off: a {cannot_rewind} model cannot rewind part of its cache to the last accepted token"
        self.pending = -1

    def begin(self) -> bool:
        row = self.model.logits(-1)
        return self._take(self.sampler.sample(row), row)

    def plan(self, batch: BatchSoFar) -> Slice:
        return Slice(as_sequence(self.model), (self.pending,))

    def expected(self) -> float:
        return 1.0

    def settle(self, step: StepTiming) -> bool:
        row = self.model.logits(-1)
        return self._take(self.sampler.sample(row), row)

    def _take(self, token: int, row: np.ndarray) -> bool:
        token = self.sink.steer(token)
        self.pending = token
        going_on = self.sink.accept(token, row)
        if going_on or self.sink.context_full:  # the token is in the reply (a full context may be made room for)
            self.sampler.accept(token)
        return going_on


# Makes the stepper of one reply (plain, or speculative: runtime/speculative/session.py); a reply that
# fills its context and goes on in a rebuilt cache gets a new one.
StepperFactory = Callable[[LlamaModel | Seq, Sampler, "TokenSink"], Stepper]
plain_stepper: StepperFactory = PlainStepper


class Phase(enum.Enum):
    PREFILLING = "prefilling"  # its prompt (or, after NEEDS_ROOM, the rebuilt cache) is read in chunks
    DECODING = "decoding"
    NEEDS_ROOM = "needs_room"  # the context is full: waiting for a shorter prompt (make_room); steps without it
    DONE = "done"


PREFILLING, DECODING, NEEDS_ROOM, DONE = Phase.PREFILLING, Phase.DECODING, Phase.NEEDS_ROOM, Phase.DONE


class ReplyRun:
    """One reply as a state machine a batch can step: prefill its prompt in chunks, then decode, then done.

    `next_slice` says what the reply adds to the next batch (a chunk of its prompt,
    or its stepper's step); `after_decode` takes the batch's outcome. A reply alone
    (`generate`) and the replies of the scheduler (runtime/scheduler) run the same
    way, so cancel, stop strings, max_tokens and a full context behave alike. It ends
    only through `finish` or `fail`, which close its sampler and its sink.
    """

    def __init__(self, model: LlamaModel | Seq, request: GenerationRequest, stats: GenerationStats, make_stepper: StepperFactory, started: float | None = None):
        self.seq = as_sequence(model)
        self.request = request
        self.stats = stats
        self.make_stepper = make_stepper
        self.started = time.perf_counter() if started is None else started
        self.sink = TokenSink(self.seq, request, stats, self.started)
        self.sampler: Sampler | None = None
        self.stepper: Stepper | None = None
        self.to_prefill: list[int] = []
        self.phase = Phase.PREFILLING
        self.streaming_since: float | None = None  # when its first reply token was sampled (perf_counter)
        self._prefill_started = 0.0
        self._prefilled = 0
        self._part: Slice | None = None
        self._dropped_by_refill: int | None = None  # messages left out once the rebuilt cache is read (make_room)
        self.error: BaseException | None = None  # why the reply could not go on (it is done, with this error)
        # request.prompt_logprobs: the prompt being scored (until it is read), what reads its rows, and its tokens' figures so far.
        self._scored: list[int] | None = None
        self._scorer = LogprobReader(request.logprobs or 0, lambda t: self.seq.piece(t, special=True)) if request.prompt_logprobs else None
        self.prompt_logprobs: list[TokenLogprob] = []

    def prepare(self, prompt: Sequence[int]) -> None:
        """Rewind the sequence to what it shares with `prompt` (spelled with its ids, token_alignment.py) and queue the rest.
        A prompt to score is read again whole: the cache has no logits for what it keeps."""
        scoring = self.request.prompt_logprobs
        self.to_prefill = prepare_prompt(self.seq, prompt, self.stats, reuse_cache=not scoring)
        self._prefill_started = time.perf_counter()
        if scoring:
            self._scored = list(prompt)
        elif self.request.max_tokens <= 0:
            self.finish("length")

    @property
    def done(self) -> bool:
        return self.phase is Phase.DONE

    def take_text(self) -> str:
        """The answer this reply streamed since the last call."""
        return self.sink.take_text()

    def take_reasoning(self) -> str:
        """The reasoning this reply streamed since the last call."""
        return self.sink.take_reasoning()

    def take_logprobs(self) -> list[TokenLogprob]:
        """The answer's tokens' log-probabilities since the last call (with GenerationRequest.logprobs)."""
        return self.sink.take_logprobs()

    def next_slice(self, batch: BatchSoFar, budget: int) -> Slice | None:
        """This reply's part of the next batch (at most `budget` tokens of prompt), or None when it has none."""
        if self.phase is not Phase.DONE and self.request.cancel.is_set():
            if self.phase is Phase.NEEDS_ROOM:
                self.sink.finish_reason = "cancelled"  # not "length": the context was to be made room for
            self.finish("cancelled")
        if self.phase is Phase.PREFILLING:
            if positions.is_image(self.to_prefill[0]):
                # A picture is evaluated whole, in a decode of its own (LlamaModel._decode_picture): outside the budget.
                chunk = self.to_prefill[: positions.run_length(self.to_prefill)]
            else:  # text up to the next picture
                longest = SCORED_PREFILL_CHUNK if self._scored is not None else PREFILL_CHUNK
                chunk = self.to_prefill[: max(1, positions.text_length(self.to_prefill, 0, min(budget, longest, self.seq.n_batch)))]
            self._part = Slice(self.seq, chunk, all_logits=self._scored is not None)
        elif self.phase is Phase.DECODING:
            assert self.stepper is not None
            self._part = self.stepper.plan(batch)
        else:
            self._part = None
        return self._part

    def expected(self) -> float:
        """Reply tokens the planned step is expected to yield (0 for a prompt chunk)."""
        if self.phase is not Phase.DECODING or self.stepper is None:
            return 0.0
        return self.stepper.expected()

    def after_decode(self, step: StepTiming) -> None:
        part, self._part = self._part, None
        if part is None:
            return
        if self.phase is Phase.PREFILLING:
            if self._scored is not None:
                self._score(self._prefilled, len(part.tokens))
            del self.to_prefill[: len(part.tokens)]
            self._prefilled += len(part.tokens)
            if self.to_prefill:
                return
            if self.sampler is None:
                elapsed = time.perf_counter() - self._prefill_started
                self.stats.prefill_tokens_per_s = self._prefilled / elapsed if elapsed > 0 else 0.0
                self._scored = None
                if self.request.max_tokens <= 0:  # the prompt was read for its figures alone
                    self.finish("length")
                    return
                self.sampler = Sampler(self.request.sampling, self.seq, self.request.prompt)
            elif self._dropped_by_refill is not None:  # the rebuilt cache is read: the reply goes on in it
                self.stats.context_dropped_messages, self._dropped_by_refill = self._dropped_by_refill, None
            self._start_decoding()
        elif self.stepper is not None and not self.stepper.settle(step):
            self._ended()

    def _score(self, start: int, n: int) -> None:
        """The figures of the prompt tokens that rows start..start+n-1 of the chunk just read predict."""
        scored, scorer = self._scored, self._scorer
        assert scored is not None and scorer is not None
        for row in range(n):
            position = start + row + 1
            if position < len(scored):
                self.prompt_logprobs.append(scorer.read(self.seq.logits(row), scored[position]))

    def after_decode_or_end(self, step: StepTiming) -> None:
        """after_decode; an error of this reply's own (a grammar that allows no token) ends this reply alone."""
        try:
            self.after_decode(step)
        except Exception as exc:
            self.fail(exc)

    def decode_failed(self, exc: BaseException) -> None:
        """The batch this reply was in could not be decoded: a cancel (abort), or an error that ends the reply with it."""
        self._part = None
        if isinstance(exc, DecodeAborted):
            self.finish("cancelled")
        else:
            self.fail(exc)

    def make_room(self, prompt: Sequence[int] | None, dropped: int) -> None:
        """The answer to NEEDS_ROOM: the conversation refitted with the reply so far committed, `dropped` messages
        left out (None: it cannot be). The cache is rebuilt as that prompt plus the whole reply so far, read
        like a prompt, and the reply goes on; if nothing more could be left out it ends with "length"."""
        if self.phase is not Phase.NEEDS_ROOM:
            return  # cancelled meanwhile
        if self.request.cancel.is_set():
            self.sink.finish_reason = "cancelled"
            self.finish("cancelled")
            return
        target = [*prompt, *self.sink.completion] if prompt is not None else []
        if prompt is None or dropped <= self.stats.context_dropped_messages or len(target) >= self.seq.n_ctx:
            self.finish(self.sink.finish_reason or "length")
            return
        kept = self.seq.truncate(positions.whole_images(target, self.seq.common_prefix(target[:-1])))  # the last token is read again for its logits
        self.to_prefill = target[kept:]
        self._dropped_by_refill = dropped
        self.sink.finish_reason, self.sink.context_full, self.stats.context_full = None, False, False
        self.phase = Phase.PREFILLING

    def _start_decoding(self) -> None:
        assert self.sampler is not None
        self.phase = Phase.DECODING
        if self.streaming_since is None:
            self.streaming_since = time.perf_counter()
        self.stepper = self.make_stepper(self.seq, self.sampler, self.sink)  # picks up from the logits the last decode left
        if not self.stepper.begin():
            self._ended()

    def _ended(self) -> None:
        sink, request = self.sink, self.request
        if sink.context_full and request.refits and not request.cancel.is_set():
            self.phase = Phase.NEEDS_ROOM  # the driver asks for a shorter prompt and answers with make_room
            return
        if request.cancel.is_set() and sink.context_full:
            sink.finish_reason = "cancelled"
        self.finish(sink.finish_reason or "stop")

    def finish(self, reason: FinishReason) -> None:
        """End the reply (once): its sampler and its sink are closed, its figures final."""
        if self.phase is Phase.DONE:
            return
        if self.sink.finish_reason is None:
            self.sink.finish_reason = reason
        self.phase = Phase.DONE
        self._part = None
        if self.sampler is not None:
            self.sampler.close()
        self.sink.close()
        self.stats.total_ms = (time.perf_counter() - self.started) * 1000
        self.stats.rss_bytes = psutil.Process().memory_info().rss

    def fail(self, exc: BaseException) -> None:
        """End the reply with an error of its own (its caller raises it)."""
        if self.error is None:
            self.error = exc
        self.finish("cancelled")

    def outcome(self) -> GenerationOutcome:
        sink = self.sink
        raw, reasoning, logprobs = sink.stream.text, sink.reasoning, sink.answer_logprobs()
        if reasoning is None:
            return GenerationOutcome(raw, sink.finish_reason or "stop", self.stats, sink.completion, raw_text=raw, logprobs=logprobs, prompt_logprobs=self.prompt_logprobs)
        return GenerationOutcome(reasoning.answer, sink.finish_reason or "stop", self.stats, sink.completion, reasoning.reasoning, raw, logprobs, self.prompt_logprobs)


def decode_step(runs: Sequence[ReplyRun], budget: int | None = None) -> list[ReplyRun]:
    """One llama_decode call carrying the next step of every run (prompt chunks fill what `budget` leaves); returns those that took part.

    A batch that is one reply's prompt chunk alone stops at that reply's cancel (llama.cpp's abort callback).
    """
    if not runs:
        return []
    model = runs[0].seq.model
    budget = model.n_batch if budget is None else budget
    batch = BatchSoFar()
    parts: list[tuple[ReplyRun, Slice]] = []
    streams_began = [r.streaming_since for r in runs if r.phase is Phase.DECODING and r.streaming_since is not None]
    prompt_budget = PREFILL_CHUNK_WHILE_STREAMING if streams_began and not model.one_sequence_per_decode else budget
    # Replies that stream first (their step is small), then prompt chunks in what is left, oldest request first.
    for run in sorted(runs, key=lambda r: (r.phase is not Phase.DECODING, r.started)):
        room = budget - batch.tokens
        if run.phase is Phase.PREFILLING and any(began < run.started for began in streams_began):
            room = min(room, prompt_budget)  # it came while others streamed: chunked, so they keep streaming
            prompt_budget -= room
        # else it came while every stream was still reading its own prompt: one wave with them, read whole,
        # as if it had come a moment sooner (requests sent together start, and end, together)
        if room <= 0:
            continue
        batch.room = room
        part = run.next_slice(batch, room)
        if part is None:
            continue
        parts.append((run, part))
        if not positions.is_image(part.tokens[0]):  # a picture is decoded apart from the batch
            batch.tokens += len(part.tokens)
        batch.expected += run.expected()
    if not parts:
        return [r for r in runs if r.done]
    abort = parts[0][0].request.cancel if len(parts) == 1 and parts[0][0].phase is Phase.PREFILLING else None
    started = time.perf_counter()
    try:
        model.decode_slices([p for _r, p in parts], abort=abort)
    except (DecodeAborted, DecodeError) as exc:
        for run, _part in parts:
            run.decode_failed(exc)
        return [r for r, _p in parts]
    seconds = time.perf_counter() - started
    # A pass with a picture in it times the vision encoder too: no measure of a decode's cost.
    timed = not any(p.singly or positions.is_image(p.tokens[0]) for _r, p in parts) and not (model.one_sequence_per_decode and len(parts) > 1)
    if timed:
        for observe in model.pass_observers:  # the speculative cost model prices drafts from every pass
            observe(batch.tokens, seconds, sum(len(p.rows) for _r, p in parts))
    step = StepTiming(batch.tokens, seconds if timed else None)
    for run, _part in parts:
        run.after_decode_or_end(step)
    return [r for r, _p in parts]


def generate(
    model: LlamaModel,
    request: GenerationRequest,
    stats: GenerationStats | None = None,
    make_stepper: StepperFactory = plain_stepper,
    refit: Callable[[int], tuple[list[int], int] | None] | None = None,
) -> GenerationOutcome:
    """Run one reply to completion, alone. `stats` is updated in place so it can be read live.

    `refit(committed)`: the prompt with fewer old turns and how many were left out, when the reply fills the context
    (request.refits), or None. The scheduler does the same with its own replies, their callers answering on their threads."""
    stats = stats if stats is not None else GenerationStats()
    run = ReplyRun(model, request, stats, make_stepper)
    run.prepare(align(run.seq.tokens, request.prompt, lambda token: model.piece(token, special=True)))
    while not run.done:
        decode_step([run])
        _hand_on(run, request)
        if run.phase is Phase.NEEDS_ROOM:
            fitted = refit(len(run.sink.completion)) if refit is not None else None
            run.make_room(*(fitted if fitted is not None else (None, 0)))
    _hand_on(run, request)
    if run.error is not None:
        raise run.error
    return run.outcome()


def _hand_on(run: ReplyRun, request: GenerationRequest) -> None:
    hand_on(request, run.take_text(), run.take_reasoning(), run.take_logprobs())


def hand_on(request: GenerationRequest, text: str, reasoning: str, logprobs: list[TokenLogprob]) -> None:
    """A step's output to the reply's channels, in the order they promise: reasoning, log-probabilities, text."""
    if reasoning:
        request.on_reasoning(reasoning)
    if logprobs:
        request.on_logprobs(logprobs)
    if text:
        request.on_text(text)
