"""`api.start` / `api.stop`: the HTTP API served from inside the runtime, on a thread with its own event loop.

The runtime's reader and job threads never run asyncio; the aiohttp application
gets a thread and a loop of its own, and reaches the engine only through the
server's job slot (backend.py). api.start binds before it answers, so the
caller learns the port it got (port 0: any free one), or why it could not
listen. Safe by default: loopback only unless allow_network, and every /v1
request needs the bearer key from the key file (made 0600 on first use).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

from aiohttp import web

from runtime.api import address, keys
from runtime.api.backend import Backend, EngineJobs
from runtime.api.http import create_app
from runtime.protocol import ApiStartParams, ApiStartResult, ErrorCode, RpcError

log = logging.getLogger("lokal.api")

START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 15
HANDLER_GRACE_S = 2.0  # replies still streaming when the API stops are cut after this


def check_params(params: ApiStartParams) -> None:
    if not address.is_loopback(params.host) and not params.allow_network:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.host: {address.network_refusal(params.host)}")
    if not 0 <= params.port <= 65535:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.port: must be in 0..65535")
    if params.max_queue < 0:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.max_queue: must not be negative")
    if params.max_body < 1:
        raise RpcError(ErrorCode.INVALID_PARAMS, "params.max_body: must be at least 1")


class Listener:
    """One listening API: its event loop on its own thread, the aiohttp runner and the Backend."""

    def __init__(self, engine: EngineJobs, params: ApiStartParams, api_key: str, key_file: Path):
        self.params = params
        self.key_file = key_file
        self._engine = engine
        self._api_key = api_key
        self.host, self.port = params.host, params.port
        self.backend: Backend | None = None
        self._runner: web.AppRunner | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="api", daemon=True)

    def start(self) -> None:
        self._thread.start()
        try:
            self.host, self.port = asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(START_TIMEOUT_S)
        except OSError as exc:  # the port is taken, the address is not this machine's, ...
            self._end_loop()
            raise RpcError(ErrorCode.LISTEN_FAILED, f"cannot listen on {self.params.host}:{self.params.port}: {exc.strerror or exc}", {"host": self.params.host, "port": self.params.port}) from None
        except BaseException:
            self._end_loop()
            raise

    async def _listen(self) -> tuple[str, int]:
        self.backend = Backend(self._engine, self.params.max_queue, self.params.defaults)
        app = create_app(self.backend, self._api_key, self.params.cors_origins, self.params.max_body, loopback=address.is_loopback(self.params.host), allow_remote_images=self.params.allow_remote_images)
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=HANDLER_GRACE_S)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.params.host, self.params.port).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        host, port = runner.addresses[0][:2]
        return host, port

    def describe(self) -> ApiStartResult:
        return ApiStartResult(address.url(self.host, self.port), self.host, self.port, str(self.key_file), self.backend.name if self.backend else None)

    def stop(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(STOP_TIMEOUT_S)
        except Exception:
            log.exception("stopping the API did not finish cleanly")
        self._end_loop()

    async def _close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()  # stops listening; requests still running get HANDLER_GRACE_S, then are cancelled
        if self.backend is not None:
            await self.backend.close()

    def _end_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()


class ApiService:
    """At most one listener; start and stop come from the server's pool, under its lock."""

    def __init__(self, engine: EngineJobs):
        self._engine = engine
        self._listener: Listener | None = None

    def start(self, params: ApiStartParams) -> ApiStartResult:
        if self._listener is not None:
            return self._listener.describe()  # already serving: where (api.stop first to move it)
        check_params(params)
        key_file = Path(params.key_file).expanduser() if params.key_file else keys.key_path()
        try:
            api_key = keys.load_or_create(key_file)
        except OSError as exc:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.key_file: cannot use {key_file}: {exc.strerror or exc}") from None
        listener = Listener(self._engine, params, api_key, key_file)
        listener.start()
        self._listener = listener
        if not address.is_loopback(listener.host):
            log.warning(address.network_warning(listener.host))
        return listener.describe()

    def requests_in_flight(self) -> int:
        listener = self._listener
        return listener.backend.admitted if listener is not None and listener.backend is not None else 0

    def stop(self) -> bool:
        listener, self._listener = self._listener, None
        if listener is None:
            return False
        listener.stop()
        return True
