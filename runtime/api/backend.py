"""The model behind the API: the runtime process, its state, and one generation at a time.

The runtime runs one engine job at a time and refuses a second with BUSY, so
the queue lives here: a request is admitted while fewer than `max_queue` wait
behind the running one, waits its turn on a FIFO lock, and is refused with 429
when the queue is full. While the model loads (or reloads after the runtime
died) requests get 503 at once instead of waiting without bound.

The runtime client is thread-based (a reader thread, concurrent futures); this
module is the one place that bridges it into asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import AsyncIterator, Callable

from runtime.api import errors
from runtime.api.errors import ApiError
from runtime.client import RuntimeClient, RuntimeDied
from runtime.protocol import ChatGenerateParams, ChatGenerateResult, ModelLoadParams, ModelLoadResult

log = logging.getLogger("lokal.api")

LOADING, READY, FAILED = "loading", "ready", "failed"


def model_name(path: str) -> str:
    """The id clients use for the model: the file name without `.gguf`."""
    name = os.path.basename(path)
    return name[: -len(".gguf")] if name.lower().endswith(".gguf") else name


class Generation:
    """One reply streaming from the runtime: its text pieces in order, then its result."""

    def __init__(self, client: RuntimeClient, params: ChatGenerateParams, loop: asyncio.AbstractEventLoop):
        self._client = client
        self._loop = loop
        self._pieces: asyncio.Queue[str | None] = asyncio.Queue()
        self.call, wait = client.generate(params, self._on_text)
        # The runtime client's reader thread posts every delta before it resolves the call, so the
        # end marker queued by this callback always comes after the last piece of text.
        self._done = loop.run_in_executor(None, wait, None)
        self._done.add_done_callback(lambda _f: self._pieces.put_nowait(None))

    def _on_text(self, text: str) -> None:  # on the runtime client's reader thread
        self._loop.call_soon_threadsafe(self._pieces.put_nowait, text)

    async def next_text(self) -> str | None:
        """The next piece of text, or None once the reply is over."""
        return await self._pieces.get()

    async def texts(self) -> AsyncIterator[str]:
        while (text := await self.next_text()) is not None:
            yield text

    async def result(self) -> ChatGenerateResult:
        """The reply's result; raises the runtime's RpcError, or RuntimeDied."""
        return await self._done

    async def finish(self) -> None:
        """Stop the reply if it still runs (the caller hung up) and wait until the runtime is free again."""
        if not self._done.done():
            with contextlib.suppress(Exception):
                await self._loop.run_in_executor(None, self._client.cancel, self.call.id)
        with contextlib.suppress(BaseException):
            await self._done


class Backend:
    def __init__(self, model_path: str, n_ctx: int = 4096, n_gpu_layers: int = 0, n_threads: int | None = None, max_queue: int = 8, client_factory: Callable[[], RuntimeClient] = RuntimeClient):
        self.model_path = model_path
        self.name = model_name(model_path)
        self.n_ctx_requested = n_ctx
        self.n_gpu_layers = n_gpu_layers
        self.n_threads = n_threads
        self.max_queue = max_queue
        self._client_factory = client_factory
        self.client: RuntimeClient | None = None
        self.info: ModelLoadResult | None = None
        self.state = LOADING
        self.error: str | None = None
        self.restarts = 0
        self._slot = asyncio.Lock()  # FIFO: waiters are served in the order they came
        self._admitted = 0  # running + waiting
        self._loader: asyncio.Task | None = None
        self.sig_state: list[Callable[[str], None]] = []  # called with the new state (serve prints it)

    # ---- lifetime ------------------------------------------------------------
    def start(self) -> None:
        self._loader = asyncio.get_running_loop().create_task(self._load())

    async def wait_loaded(self) -> None:
        if self._loader is not None:
            await asyncio.shield(self._loader)

    def _set_state(self, state: str) -> None:
        self.state = state
        for callback in self.sig_state:
            callback(state)

    async def _load(self) -> None:
        # The load holds the slot, so no generation can reach a runtime that is not ready.
        async with self._slot:
            self._set_state(LOADING)
            loop = asyncio.get_running_loop()
            try:
                self.client, self.info = await loop.run_in_executor(None, self._start_runtime)
            except Exception as exc:
                self.error = getattr(exc, "message", None) or str(exc)
                log.error("cannot load %s: %s", self.model_path, self.error)
                self._set_state(FAILED)
                return
            self.error = None
            self._set_state(READY)

    def _start_runtime(self) -> tuple[RuntimeClient, ModelLoadResult]:
        client = self._client_factory()
        try:
            client.initialize("lokal-serve")
            info = client.load_model(ModelLoadParams(path=self.model_path, n_ctx=self.n_ctx_requested, n_gpu_layers=self.n_gpu_layers, n_threads=self.n_threads))
        except BaseException:
            client.close()
            raise
        return client, info

    async def close(self) -> None:
        if self._loader is not None and not self._loader.done():
            self._loader.cancel()
        if self.client is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.client.close)

    # ---- requests ------------------------------------------------------------
    @property
    def n_ctx(self) -> int:
        return self.info.n_ctx if self.info else self.n_ctx_requested

    @property
    def queued(self) -> int:
        return max(self._admitted - 1, 0)

    @property
    def running(self) -> bool:
        return self._admitted > 0 and self._slot.locked()

    def check_model(self, requested: str) -> None:
        if requested != self.name:
            raise errors.model_not_found(requested, [self.name])

    def max_tokens(self, requested: int | None) -> int:
        """The reply can never outgrow the context, so that is the cap (and the default)."""
        return self.n_ctx if requested is None else min(requested, self.n_ctx)

    def _check_available(self) -> None:
        if self.state == LOADING:
            raise errors.loading(self.name)
        if self.state == FAILED:
            raise ApiError(503, f"the model {self.name!r} could not be loaded: {self.error}", type="server_error", code="model_unavailable")

    @contextlib.asynccontextmanager
    async def generation(self, params: ChatGenerateParams) -> AsyncIterator[Generation]:
        """Wait for this request's turn, then run its reply; ApiError 503 while loading, 429 when the queue is full."""
        self._check_available()
        if self._admitted >= 1 + self.max_queue:
            raise errors.queue_full(self.max_queue)
        self._admitted += 1
        try:
            await self._slot.acquire()
        except BaseException:
            self._admitted -= 1  # the caller left while waiting
            raise
        generation = None
        try:
            self._check_available()  # the runtime may have died while this request waited
            try:
                generation = Generation(self.client, params, asyncio.get_running_loop())
            except RuntimeDied as exc:
                raise errors.from_runtime(exc) from None
            yield generation
        finally:
            # Shielded: even if the caller hangs up now, the runtime is stopped and the slot freed.
            await asyncio.shield(self._settle(generation))

    async def _settle(self, generation: Generation | None) -> None:
        try:
            if generation is not None:
                await generation.finish()
        finally:
            self._admitted -= 1
            died = self.client is not None and self.client.died is not None
            if died and self.state == READY:
                log.error("the runtime died: %s; restarting it", self.client.died)
                self.restarts += 1
                self._set_state(LOADING)  # before the slot is free, so waiters see it and get 503
                self._slot.release()
                dead, self.client = self.client, None
                asyncio.get_running_loop().run_in_executor(None, dead.close)  # reap the dead process
                self.start()
            else:
                self._slot.release()
