"""One reply: reuse the cached prefix, prefill the rest of the prompt, decode token by token.

The KV cache is never recomputed for tokens it already holds: the prompt is
compared with `model.tokens` and only the tokens after the longest common
prefix are evaluated. A regenerate or an edit of an earlier message simply
has a shorter common prefix, so the cache is rewound to it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import psutil

from runtime.engine.llama_model import DecodeAborted, LlamaModel
from runtime.engine.sampling import Sampler, SamplingConfig
from runtime.engine.text_stream import TextStream
from runtime.protocol import ErrorCode, GenerationStats, RpcError

# Prefill is split so a cancel is seen between chunks too; llama.cpp's abort callback covers the inside of one.
PREFILL_CHUNK = 512


@dataclass
class GenerationRequest:
    prompt: Sequence[int]
    max_tokens: int
    sampling: SamplingConfig
    stop: Sequence[str] = ()
    cancel: threading.Event = field(default_factory=threading.Event)
    on_text: Callable[[str], None] = lambda text: None
    # Called before the prompt is prepared: may swap a saved KV state into the cache (runtime/kvstore).
    restore: Callable[[LlamaModel, Sequence[int], GenerationStats], None] | None = None
    # Called when the reply fills the context: may rebuild the cache as fewer old turns + the reply so far
    # (every accepted token evaluated); True if the reply can go on (runtime/engine/context_window.py).
    make_room: Callable[[LlamaModel, Sequence[int]], bool] | None = None


@dataclass
class GenerationOutcome:
    text: str
    finish_reason: str
    stats: GenerationStats
    completion: list[int]


class TokenSink:
    """Receives sampled tokens in order and decides when the reply is over.

    Plain and speculative decoding both feed it, so end-of-generation tokens,
    stop strings, max_tokens, a full context and cancel are handled in one place.
    """

    def __init__(self, model: LlamaModel, request: GenerationRequest, stats: GenerationStats, started: float):
        self.model = model
        self.request = request
        self.stats = stats
        self.stream = TextStream(request.stop)
        self.completion: list[int] = []
        self.finish_reason: str | None = None
        self.context_full = False  # the reply stopped because the context had no room for its next token
        self._started = started
        self._first_token_at: float | None = None

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    def accept(self, token: int) -> bool:
        """Take one sampled token; False once the reply has finished (the token may not be in it)."""
        now = time.perf_counter()
        if self._first_token_at is None:
            self._first_token_at = now
            self.stats.ttft_ms = (now - self._started) * 1000
        if self.model.is_end_of_generation(token):
            self.finish_reason = "stop"
            return False
        self.completion.append(token)
        self.stats.completion_tokens = len(self.completion)
        text = self.stream.push(self.model.piece(token))
        if text:
            self.request.on_text(text)
        if self.stream.stopped:
            self.finish_reason = "stop"
        elif len(self.completion) >= self.request.max_tokens:
            self.finish_reason = "length"
        elif len(self.model.tokens) >= self.model.n_ctx:  # no room to evaluate this token
            self.finish_reason = "length"
            self.context_full = True
        elif self.request.cancel.is_set():
            self.finish_reason = "cancelled"
        if len(self.completion) > 1:
            self.stats.decode_tokens_per_s = (len(self.completion) - 1) / max(now - self._first_token_at, 1e-9)
        return self.finish_reason is None

    def close(self) -> None:
        tail = self.stream.finish()
        if tail:
            self.request.on_text(tail)


def prepare_prompt(model: LlamaModel, prompt: Sequence[int], stats: GenerationStats) -> list[int]:
    """Rewind the cache to the longest prefix it shares with `prompt`; returns the tokens still to evaluate."""
    if len(prompt) >= model.n_ctx:
        raise RpcError(
            ErrorCode.CONTEXT_OVERFLOW,
            f"the conversation is {len(prompt)} tokens long and does not fit the context of {model.n_ctx} tokens",
            {"prompt_tokens": len(prompt), "n_ctx": model.n_ctx},
        )
    reuse = model.common_prefix(prompt)
    if reuse == len(prompt):
        reuse -= 1  # the last prompt token is evaluated again to get the logits to sample from
    kept = model.truncate(reuse)
    stats.prompt_tokens = len(prompt)
    stats.prompt_tokens_restored = min(stats.prompt_tokens_restored, kept)  # set by a restore just before
    stats.prompt_tokens_reused = kept - stats.prompt_tokens_restored
    stats.prompt_tokens_evaluated = len(prompt) - kept
    return list(prompt[kept:])


def prefill(model: LlamaModel, tokens: Sequence[int], cancel: threading.Event, stats: GenerationStats) -> bool:
    """Evaluate the prompt's new tokens; False if cancelled on the way."""
    started = time.perf_counter()
    chunk = min(PREFILL_CHUNK, model.n_batch)
    try:
        for i in range(0, len(tokens), chunk):
            if cancel.is_set():
                return False
            model.decode(tokens[i : i + chunk], abort=cancel)
    except DecodeAborted:
        return False
    elapsed = time.perf_counter() - started
    stats.prefill_tokens_per_s = len(tokens) / elapsed if elapsed > 0 else 0.0
    return True


def decode_plain(model: LlamaModel, sampler: Sampler, sink: TokenSink) -> None:
    """One target forward pass per token."""
    token = sampler.sample(model.logits(-1))
    while sink.accept(token):
        sampler.accept(token)
        model.decode((token,))
        token = sampler.sample(model.logits(-1))


Decoder = Callable[[LlamaModel, Sampler, TokenSink], None]


def generate(model: LlamaModel, request: GenerationRequest, stats: GenerationStats | None = None, decoder: Decoder = decode_plain) -> GenerationOutcome:
    """Run one reply to completion. `stats` is updated in place so it can be read live."""
    started = time.perf_counter()
    stats = stats if stats is not None else GenerationStats()
    if request.restore is not None:
        request.restore(model, request.prompt, stats)
    new_tokens = prepare_prompt(model, request.prompt, stats)
    sink = TokenSink(model, request, stats, started)
    if request.max_tokens <= 0:
        sink.finish_reason = "length"
    elif not prefill(model, new_tokens, request.cancel, stats):
        sink.finish_reason = "cancelled"
    else:
        sampler = Sampler(request.sampling, model, request.prompt)
        try:
            decoder(model, sampler, sink)
            while sink.context_full and request.make_room is not None and not request.cancel.is_set() and request.make_room(model, sink.completion):
                sink.finish_reason, sink.context_full = None, False
                decoder(model, sampler, sink)  # picks up from the logits of the reply's last token
        finally:
            sampler.close()
        if request.cancel.is_set() and sink.context_full:
            sink.finish_reason = "cancelled"
    sink.close()
    stats.total_ms = (time.perf_counter() - started) * 1000
    stats.rss_bytes = psutil.Process().memory_info().rss
    return GenerationOutcome(sink.stream.text, sink.finish_reason or "stop", stats, sink.completion)
