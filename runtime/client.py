"""A plain-Python client of the runtime process, for everything that is not the Qt window:
the `lokal` CLI, the API server, benchmarks and tests.

It starts the runtime as a child process (the same way the window does), sends
requests and routes the replies and notifications that a reader thread parses.
If the child exits, every waiting call fails with RuntimeDied, which says how
it ended (exit code or signal) and the last lines it wrote to stderr.

Requests name their method by its typed handle (runtime.protocol.methods), take its
params dataclass and give back its result dataclass, decoded once where the answer
arrives; mypy knows both from the handle:

    quants = client.request(methods.HUB_QUANTS, HubQuantsParams("org/repo"))  # -> HubQuantsResult

An error answer raises RpcError; one that carries the runtime's traceback
(an internal error) is logged with it.
"""

from __future__ import annotations

import collections
import itertools
import logging
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import IO, Any, Callable, Generic, Sequence, TypeVar

from runtime import protocol
from runtime.protocol import (
    ChatCancelParams,
    ChatGenerateParams,
    ChatGenerateResult,
    InitializeParams,
    InitializeResult,
    MetricsParams,
    MetricsResult,
    ModelLoadParams,
    Method,
    ModelLoadResult,
    Notification,
    RequestId,
    Response,
    RpcError,
    methods,
)

log = logging.getLogger("lokal.client")

NotificationHandler = Callable[[str, Any], None]
P = TypeVar("P")
R = TypeVar("R")


def log_remote_traceback(logger: logging.Logger, method: str, error: RpcError) -> None:
    """An internal error in the runtime carries its traceback (error.data["traceback"]): keep it in the client's log."""
    remote = error.data.get("traceback") if isinstance(error.data, dict) else None
    if remote:
        logger.error("%s failed in the runtime: %s\n%s", method, error.message, str(remote).rstrip())


def runtime_command() -> list[str]:
    """How to start the runtime: the frozen app runs itself with `runtime`; from source, `python -m runtime`."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "runtime"]
    return [sys.executable, "-m", "runtime"]


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "closed its output"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = " (llama.cpp aborted)" if name == "SIGABRT" else ""
        return f"was killed by {name}{hint}"
    return f"exited with code {returncode}"


class RuntimeDied(RuntimeError):
    def __init__(self, returncode: int | None, stderr_tail: str):
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        message = f"the Lokal runtime stopped unexpectedly: it {describe_exit(returncode)}"
        if stderr_tail.strip():
            message += "\nits last words:\n" + stderr_tail.rstrip()
        super().__init__(message)


class PendingCall(Generic[R]):
    """A request on its way; result() waits for its answer, decoded into the method's result dataclass."""

    def __init__(self, request_id: int, method: str):
        self.id = request_id
        self.method = method
        self.future: Future[R] = Future()

    def result(self, timeout: float | None = None) -> R:
        return self.future.result(timeout)


class RuntimeClient:
    def __init__(
        self,
        command: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
        on_notification: NotificationHandler | None = None,
        stderr_lines: int = 40,
    ):
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, PendingCall[Any]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._handlers: list[NotificationHandler] = [on_notification] if on_notification else []
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self.died: RuntimeDied | None = None
        # Error replies with no request id (to lines the runtime could not parse): kept for inspection.
        self.unrouted_errors: collections.deque[RpcError] = collections.deque(maxlen=100)
        child_env = dict(os.environ if env is None else env)
        child_env.setdefault("PYTHONUNBUFFERED", "1")
        self.process = subprocess.Popen(
            list(command or runtime_command()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            bufsize=0,
        )
        self._reader = threading.Thread(target=self._read_stdout, name="runtime-stdout", daemon=True)
        self._stderr_reader = threading.Thread(target=self._read_stderr, name="runtime-stderr", daemon=True)
        self._reader.start()
        self._stderr_reader.start()

    # ---- plumbing ------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self.process.pid

    def add_notification_handler(self, handler: NotificationHandler) -> None:
        self._handlers.append(handler)

    def remove_notification_handler(self, handler: NotificationHandler) -> None:
        self._handlers.remove(handler)

    def _pipe(self, pipe: IO[bytes] | None) -> IO[bytes]:
        assert pipe is not None, "the runtime's pipes are made in __init__"
        return pipe

    def send_raw(self, line: bytes) -> None:
        """Write bytes as they are (tests use it to send malformed input)."""
        with self._write_lock:
            stdin = self._pipe(self.process.stdin)
            stdin.write(line)
            stdin.flush()

    def _register(self, method: str) -> PendingCall[Any]:
        if self.died is not None:
            raise self.died
        call: PendingCall[Any] = PendingCall(next(self._ids), method)
        with self._lock:
            self._pending[call.id] = call
        return call

    def _send_call(self, call: PendingCall[R], params: Any) -> PendingCall[R]:
        try:
            self.send_raw(protocol.request_line(call.id, call.method, params))
        except (BrokenPipeError, OSError):
            self._wait_for_exit()
        return call

    def start(self, method: Method[P, R], params: P | None = None) -> PendingCall[R]:
        """Send `method` with its params dataclass (None: its defaults) without waiting for the answer."""
        checked = protocol.params_for(method, params)
        call: PendingCall[R] = self._register(method.name)
        return self._send_call(call, checked)

    def request(self, method: Method[P, R], params: P | None = None, timeout: float | None = None) -> R:
        """Send a request and wait for its result dataclass; raises RpcError or RuntimeDied."""
        return self.start(method, params).result(timeout)

    def request_unchecked(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        """Send `params` as they are to the method named `method`, e.g. a dict with a wrong field or a method
        that does not exist (tests of bad input); the result of a known method is still decoded."""
        return self._send_call(self._register(method), params).result(timeout)

    def _read_stdout(self) -> None:
        # Whatever one line does, this thread must keep reading: it is the only one that completes calls,
        # and when it ends every pending call is failed (_wait_for_exit), never left waiting.
        try:
            for line in self._pipe(self.process.stdout):
                if not line.strip():
                    continue
                try:
                    self._dispatch(line)
                except Exception:
                    log.exception("a line from the runtime could not be handled: %r", line[:200])
        finally:
            self._wait_for_exit()

    def _dispatch(self, line: bytes) -> None:
        try:
            message = protocol.parse_line(line)
        except RpcError:
            self._stderr_tail.append(f"[unparseable line from runtime] {line[:200]!r}")
            return
        if isinstance(message, Response):
            with self._lock:
                call = self._pending.pop(message.id, None) if message.id is not None else None
            if call is None:
                if message.error is not None:
                    self.unrouted_errors.append(message.error)
                return
            self._complete(call, message)
        elif isinstance(message, Notification):
            for handler in list(self._handlers):
                handler(message.method, message.params)

    def _complete(self, call: PendingCall[Any], response: Response) -> None:
        if response.error is not None:
            log_remote_traceback(log, call.method, response.error)
            call.future.set_exception(response.error)
            return
        try:
            method = methods.METHODS.get(call.method)
            result = protocol.decode_result(method, response.result) if method is not None else response.result
        except Exception as exc:  # an RpcError naming the bad field, or a decoder's bug: the caller hears of it either way
            call.future.set_exception(exc)
            return
        call.future.set_result(result)

    def _read_stderr(self) -> None:
        for line in self._pipe(self.process.stderr):
            self._stderr_tail.append(line.decode("utf-8", errors="replace").rstrip("\n"))

    def _wait_for_exit(self) -> None:
        try:
            returncode = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            returncode = None
        self._stderr_reader.join(timeout=1)
        self.died = RuntimeDied(returncode, "\n".join(self._stderr_tail))
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for call in pending:
            if not call.future.done():
                call.future.set_exception(self.died)

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr_tail)

    # ---- typed helpers -------------------------------------------------------
    def initialize(self, client: str = "lokal-cli", timeout: float | None = 60) -> InitializeResult:
        return self.request(methods.INITIALIZE, InitializeParams(protocol.PROTOCOL_VERSION, client), timeout)

    def load_model(self, params: ModelLoadParams, timeout: float | None = None) -> ModelLoadResult:
        return self.request(methods.MODEL_LOAD, params, timeout)

    def generate(
        self, params: ChatGenerateParams, on_text: Callable[[str], None] | None = None, on_reasoning: Callable[[str], None] | None = None
    ) -> tuple[PendingCall[ChatGenerateResult], Callable[[float | None], ChatGenerateResult]]:
        """Start a reply; returns the call (its id is what chat.cancel takes) and a function that waits for the result.
        `on_text` gets the answer's deltas, `on_reasoning` the reasoning's (ChatDelta.reasoning)."""
        call: PendingCall[ChatGenerateResult] = self._register(methods.CHAT_GENERATE.name)
        handler = None
        if on_text is not None or on_reasoning is not None:
            def handler(method: str, data: Any) -> None:
                if method == methods.CHAT_DELTA.name and data.get("request_id") == call.id:
                    if data.get("reasoning") and on_reasoning is not None:
                        on_reasoning(data["reasoning"])
                    if data["text"] and on_text is not None:
                        on_text(data["text"])
            self.add_notification_handler(handler)
        self._send_call(call, protocol.params_for(methods.CHAT_GENERATE, params))

        def wait(timeout: float | None = None) -> ChatGenerateResult:
            try:
                return call.result(timeout)
            finally:
                if handler is not None and handler in self._handlers:
                    self.remove_notification_handler(handler)

        return call, wait

    def chat(self, params: ChatGenerateParams, on_text: Callable[[str], None] | None = None, timeout: float | None = None, on_reasoning: Callable[[str], None] | None = None) -> ChatGenerateResult:
        _call, wait = self.generate(params, on_text, on_reasoning)
        return wait(timeout)

    def cancel(self, request_id: RequestId) -> bool:
        return self.request(methods.CHAT_CANCEL, ChatCancelParams(request_id), timeout=10).cancelled

    def metrics(self, conversation_id: str | None = None) -> MetricsResult:
        return self.request(methods.RUNTIME_METRICS, MetricsParams(conversation_id), timeout=10)

    # ---- lifetime ------------------------------------------------------------
    def close(self, timeout: float = 10) -> int | None:
        """Ask the runtime to shut down; kill it if it does not go in time."""
        if self.process.poll() is None and self.died is None:
            try:
                self.request(methods.SHUTDOWN, timeout=timeout)
            except Exception as exc:  # it may have died meanwhile; closing stdin and the kill below still end it
                log.debug("shutdown request failed: %s", exc)
        try:
            self._pipe(self.process.stdin).close()
        except OSError:
            pass
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def __enter__(self) -> "RuntimeClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
