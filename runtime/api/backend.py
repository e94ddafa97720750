"""The model behind the API: the runtime's own engine, its state, and the API's replies in it.

The API runs inside the runtime process and hands its replies to the engine
(runtime/server.py), whose scheduler decodes them in the same batches as the
protocol client's, with speculative decoding; their KV caches and saved states
are the API's own. Up to n_seq replies stream at once (ModelLoadResult.n_seq);
the API's own bound: a request is admitted while fewer than `max_queue` wait
beyond those, in the order they came, and is refused with 429 when the queue is
full. While a model loads requests get 503 at once instead of waiting without bound.

The engine's jobs run on threads; this module is the one place that bridges
them into asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Protocol, Sequence

from runtime.api import errors
from runtime.protocol import ApiDefaults, Attachment, ChatGenerateParams, ChatGenerateResult, ModelLoadResult, RpcError, TokenLogprob

if TYPE_CHECKING:  # a type only: `lokal serve` (app/cli) imports this module, and the model module reaches llama.cpp
    from runtime.embeddings.model import EmbeddingModel

LOADING, READY, NO_MODEL = "loading", "ready", "no_model"

Finish = Callable[[Any, "RpcError | None"], None]


class EngineJobs(Protocol):
    """What the API needs of the runtime (runtime/server.py implements it); every method may be called from any thread."""

    def served_model(self) -> ModelLoadResult | None: ...

    def model_loading(self) -> bool: ...

    def expect_reply(self) -> Callable[[], None]:
        """A request for a reply has arrived (Scheduler.expect); call the result once it is started or given up."""
        ...

    def start_generation(self, params: ChatGenerateParams, on_text: Callable[[str, str, list[TokenLogprob]], None], finish: Finish, arrived: Callable[[], None] | None = None) -> Any: ...

    def cancel_job(self, job: Any) -> None: ...

    def spell(self, tokens: list[int]) -> str:
        """The loaded model's token ids as text; RpcError INVALID_PARAMS for an id it does not have."""
        ...

    def tokenize(self, text: str, add_special: bool, parse_special: bool, with_pieces: bool) -> tuple[list[int], list[bytes]]:
        """The loaded model's token ids for `text`, and with `with_pieces` the bytes each stands for (special tokens written out)."""
        ...

    def embedding_model(self) -> EmbeddingModel | None: ...

    def store_document(self, data: bytes, name: str, mime: str) -> Attachment: ...


def model_name(path: str) -> str:
    """The id clients use for the model: the file name without `.gguf`."""
    name = os.path.basename(path)
    return name[: -len(".gguf")] if name.lower().endswith(".gguf") else name


@dataclass(frozen=True)
class Piece:
    """What one delta of a reply brought: answer text, reasoning text (one of them, usually), or the log-probabilities
    of answer tokens (ChatGenerateParams.logprobs), which come just before their text."""

    text: str = ""
    reasoning: str = ""
    logprobs: tuple[TokenLogprob, ...] = ()


class Generation:
    """One reply streaming from the engine: its pieces in order, then its result."""

    def __init__(self, engine: EngineJobs, params: ChatGenerateParams, loop: asyncio.AbstractEventLoop, arrived: Callable[[], None] | None = None):
        self._engine = engine
        self._loop = loop
        self._pieces: asyncio.Queue[Piece | None] = asyncio.Queue()
        self._done: asyncio.Future[ChatGenerateResult] = loop.create_future()
        self.job = engine.start_generation(params, self._on_text, self._on_finish, arrived)

    # The job thread calls these in order, the text first; call_soon_threadsafe keeps that order on the loop.
    def _on_text(self, text: str, reasoning: str = "", logprobs: Sequence[TokenLogprob] = ()) -> None:
        self._post(self._pieces.put_nowait, Piece(text, reasoning, tuple(logprobs)))

    def _on_finish(self, result: Any, error: RpcError | None) -> None:
        self._post(self._resolve, result, error)

    def _post(self, callback, *args) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the API stopped, nobody waits for this any more
            self._loop.call_soon_threadsafe(callback, *args)

    def _resolve(self, result: Any, error: RpcError | None) -> None:
        if not self._done.done():
            if error is not None:
                self._done.set_exception(error)
            else:
                self._done.set_result(result)
        self._pieces.put_nowait(None)

    async def next_text(self) -> Piece | None:
        """The next piece of the reply, or None once the reply is over."""
        return await self._pieces.get()

    async def texts(self) -> AsyncIterator[Piece]:
        while (text := await self.next_text()) is not None:
            yield text

    async def result(self) -> ChatGenerateResult:
        """The reply's result; raises the runtime's RpcError."""
        return await self._done

    async def finish(self) -> None:
        """Stop the reply if it still runs (the caller hung up) and wait until the engine's slot is free of it."""
        if not self._done.done():
            self._engine.cancel_job(self.job)
        with contextlib.suppress(BaseException):
            await self._done


class Backend:
    def __init__(self, engine: EngineJobs, max_queue: int = 8, defaults: ApiDefaults | None = None):
        self.engine = engine
        self.defaults = defaults or ApiDefaults()  # what a request leaves out (lokal serve --preset)
        self.max_queue = max_queue
        self._admitted = 0  # streaming + waiting
        self._generations: set[Generation] = set()
        self._closed = False

    # ---- the model -------------------------------------------------------------
    @property
    def model(self) -> ModelLoadResult | None:
        return self.engine.served_model()

    @property
    def name(self) -> str | None:
        model = self.model
        return model_name(model.path) if model is not None else None

    @property
    def state(self) -> str:
        if self.engine.model_loading():
            return LOADING
        return READY if self.model is not None else NO_MODEL

    @property
    def n_ctx(self) -> int:
        model = self.model
        return model.n_ctx if model is not None else 0

    def check_model(self, requested: str) -> None:
        """503 while no model is ready; 404 for a model that is not the one loaded."""
        self.check_available()
        self.check_name(requested)

    def check_name(self, requested: str) -> None:
        """404 for a model that is not the one loaded now (the window may load another at any time)."""
        name = self.name
        if requested != name:
            raise errors.model_not_found(requested, [name] if name else [])

    def max_tokens(self, requested: int | None) -> int:
        """The reply can never outgrow the context, so that is the cap (and the default)."""
        return self.n_ctx if requested is None else min(requested, self.n_ctx)

    def check_available(self) -> None:
        """503 while no model is ready (one loads, or none is loaded), or the server stops."""
        if self._closed:
            raise errors.stopping()
        state = self.state
        if state == LOADING:
            raise errors.loading(self.name)
        if state == NO_MODEL:
            raise errors.no_model()

    # ---- requests ------------------------------------------------------------
    @property
    def n_parallel(self) -> int:
        """Replies that stream at once (the loaded model's sequences)."""
        model = self.model
        return max(1, model.n_seq) if model is not None else 1

    @property
    def admitted(self) -> int:
        """Requests being answered or waiting for their turn (read from other threads: one int, no lock needed)."""
        return self._admitted

    @property
    def queued(self) -> int:
        return max(self._admitted - self.n_parallel, 0)

    @property
    def running(self) -> bool:
        return self._admitted > 0

    def expect_reply(self) -> Callable[[], None]:
        """A request for a reply has come in, its body not read yet: the scheduler's next wave of prompts waits for
        it (runtime/scheduler/scheduler.py). Call the result once it is handed to `generation` or refused."""
        return self.engine.expect_reply()

    @contextlib.asynccontextmanager
    async def generations(self, choices: list[ChatGenerateParams], arrived: Callable[[], None] | None = None, param: str = "n") -> AsyncIterator[list[Generation]]:
        """Run this request's replies, one a choice (the scheduler starts each in its turn); ApiError 503 while loading,
        429 when the queue has no room for all of them, 400 when this server could never hold them at once.
        `arrived`: from `expect_reply` when the request came in; the engine calls it once the first reply is submitted
        (the others are expected from now on). `param`: the request's field that asked for this many (named in the 400)."""
        self.check_available()
        most = self.n_parallel + self.max_queue
        if len(choices) > most:
            raise errors.bad_request(f"{param}: this server answers at most {most} choices at once ({self.n_parallel} streaming and {self.max_queue} waiting)", param=param)
        if self._admitted + len(choices) > most:
            raise errors.queue_full(self.max_queue)
        self._admitted += len(choices)
        loop = asyncio.get_running_loop()
        started: list[Generation] = []
        others = [self.engine.expect_reply() for _ in choices[1:]]  # a wave of prompts waits for them all
        try:
            for params, arrival in zip(choices, [arrived, *others]):
                generation = Generation(self.engine, params, loop, arrival)
                started.append(generation)
                self._generations.add(generation)
            yield started
        finally:
            for arrival in others:  # each was called once its reply was submitted; one never submitted is not expected any more
                arrival()
            # Shielded: even if the caller hangs up now, the replies are stopped and the slots freed.
            await asyncio.shield(self._settle(started, len(choices)))

    async def _settle(self, generations: list[Generation], admitted: int) -> None:
        try:
            for generation in generations:
                await generation.finish()
                self._generations.discard(generation)
        finally:
            self._admitted -= admitted

    async def close(self) -> None:
        """Refuse new requests and stop the replies still running."""
        self._closed = True
        for generation in list(self._generations):
            await generation.finish()
