"""The runtime process: JSON-RPC over stdin/stdout, one engine job at a time on a worker thread.

The reader thread parses each line and answers at once what needs no engine
time (initialize, chat.cancel, runtime.metrics, shutdown), so a reply that is
streaming never blocks them. Engine jobs (model.load, model.unload,
chat.generate) run one at a time on the worker; a second job while one runs is
refused with BUSY and the id of the running request: clients queue on their
side, where they can show it.

stdout carries protocol lines only: at start the process moves its real stdout
to a private descriptor and points fd 1 at stderr, so nothing llama.cpp prints
can corrupt the stream.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import sys
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable

from runtime import __version__, protocol
from runtime.protocol import (
    ChatCancelParams,
    ChatCancelResult,
    ChatDelta,
    ChatGenerateParams,
    Empty,
    ErrorCode,
    InitializeParams,
    InitializeResult,
    ModelLoadParams,
    ModelProgress,
    ModelUnloadResult,
    Notification,
    Request,
    Response,
    RpcError,
    ShutdownResult,
)

log = logging.getLogger("lokal.runtime")

ENGINE_METHODS = {"model.load", "model.unload", "chat.generate"}
CAPABILITIES = ["chat.stream", "chat.cancel", "kv.prefix_reuse", "model.progress", "chat.raw_prompt", "kv.saved_states", "context.overflow_trim"]


@dataclass
class Job:
    request_id: Any
    method: str
    cancel: threading.Event = field(default_factory=threading.Event)


class RuntimeServer:
    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, engine=None):
        from runtime.engine.engine import Engine  # llama_cpp loads here, not at import of the protocol

        self._in = stdin
        self._out = stdout
        self._out_lock = threading.Lock()
        self.engine = engine or Engine()
        self._job: Job | None = None
        self._job_lock = threading.Lock()
        self._job_thread: threading.Thread | None = None
        self._initialized = False
        self._stopping = False
        self._handlers: dict[str, Callable[[Any], Any]] = {
            "initialize": self._initialize,
            "chat.cancel": self._cancel,
            "runtime.metrics": lambda _params: self.engine.metrics(),
            "shutdown": self._shutdown,
            "kv.store_info": lambda params: self.engine.kv_store_info(params.wait_for_writes),
            "kv.clear": lambda _params: self.engine.kv_clear(),
        }
        # Hub and local-model methods (runtime/hub): never in the engine's job slot; the slow ones on a pool.
        from runtime.hub.service import BACKGROUND, HubService

        self.hub = HubService(self.notify)
        self._handlers.update(self.hub.handlers())
        self._background_methods = BACKGROUND
        self._background = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="hub")

    # ---- output ------------------------------------------------------------
    def _send(self, line: bytes) -> None:
        with self._out_lock:
            try:
                self._out.write(line)
                self._out.flush()
            except (BrokenPipeError, ValueError):
                self._stopping = True  # the client is gone

    def notify(self, method: str, params: Any) -> None:
        self._send(protocol.notification_line(method, params))

    # ---- input -------------------------------------------------------------
    def serve(self) -> int:
        while not self._stopping:
            line = self._in.readline()
            if not line:
                break  # the client closed our stdin: it is gone, so are we
            if line.strip():
                self.handle_line(line)
        self._stop_job()
        self.hub.close()  # running downloads pause, to resume at the next start
        return 0

    def handle_line(self, line: bytes) -> None:
        try:
            message = protocol.parse_line(line)
        except RpcError as exc:
            request_id = exc.data.get("id") if isinstance(exc.data, dict) else None
            self._send(protocol.error_line(request_id, exc))
            return
        if isinstance(message, Response):
            return  # the runtime asks clients nothing
        if isinstance(message, Notification):
            return  # no notifications are defined client -> runtime; JSON-RPC says never answer one
        self._handle_request(message)

    def _handle_request(self, request: Request) -> None:
        try:
            spec = protocol.METHODS.get(request.method)
            if spec is None:
                raise RpcError(ErrorCode.METHOD_NOT_FOUND, f"unknown method {request.method!r}", {"known": sorted(protocol.METHODS)})
            if not self._initialized and request.method not in ("initialize", "shutdown"):
                raise RpcError(ErrorCode.NOT_INITIALIZED, "call initialize first")
            params = protocol.decode(spec.params, request.params)
            if request.method in ENGINE_METHODS:
                self._start_job(request, params)
                return
            if request.method in self._background_methods:
                self._background.submit(self._run_background, request, params)
                return
            result = self._handlers[request.method](params)
            self._send(protocol.result_line(request.id, result))
        except RpcError as exc:
            self._send(protocol.error_line(request.id, exc))
        except Exception as exc:  # a bug: report it with its traceback, keep serving
            log.exception("request %s failed", request.method)
            self._send(protocol.error_line(request.id, internal_error(exc)))

    def _run_background(self, request: Request, params: Any) -> None:
        try:
            line = protocol.result_line(request.id, self._handlers[request.method](params))
        except RpcError as exc:
            line = protocol.error_line(request.id, exc)
        except Exception as exc:
            log.exception("request %s failed", request.method)
            line = protocol.error_line(request.id, internal_error(exc))
        self._send(line)

    # ---- engine jobs ---------------------------------------------------------
    def _start_job(self, request: Request, params: Any) -> None:
        with self._job_lock:
            if self._job is not None:
                raise RpcError(
                    ErrorCode.BUSY,
                    f"the runtime is busy with {self._job.method} (request {self._job.request_id!r}); try again when it finishes",
                    {"running_request_id": self._job.request_id, "running_method": self._job.method},
                )
            job = self._job = Job(request.id, request.method)
        thread = threading.Thread(target=self._run_job, args=(job, params), name=f"job-{request.method}", daemon=True)
        self._job_thread = thread
        thread.start()

    def _run_job(self, job: Job, params: Any) -> None:
        try:
            result = self._execute(job, params)
            line = protocol.result_line(job.request_id, result)
        except RpcError as exc:
            line = protocol.error_line(job.request_id, exc)
        except Exception as exc:
            log.exception("job %s failed", job.method)
            line = protocol.error_line(job.request_id, internal_error(exc))
        with self._job_lock:
            self._job = None
        self._send(line)
        # The reply is out: now the engine may copy its KV cache for the store (the next job waits for that copy, never for the disk).
        after_reply = getattr(self.engine, "after_reply", None)
        if after_reply is not None:
            try:
                after_reply()
            except Exception:
                log.exception("saving the KV state after %s failed", job.method)

    def _execute(self, job: Job, params: Any) -> Any:
        if job.method == "model.load":
            assert isinstance(params, ModelLoadParams)
            return self.engine.load(params, lambda p: self.notify("model.progress", ModelProgress(params.path, p)), job.cancel)
        if job.method == "model.unload":
            return ModelUnloadResult(self.engine.unload())
        if job.method == "chat.generate":
            assert isinstance(params, ChatGenerateParams)
            on_text = lambda text: self.notify("chat.delta", ChatDelta(job.request_id, params.conversation_id, text))
            return self.engine.generate(params, job.cancel, on_text, job.request_id)
        raise RpcError(ErrorCode.METHOD_NOT_FOUND, job.method)

    def _stop_job(self) -> None:
        with self._job_lock:
            job, thread = self._job, self._job_thread
        if job is not None:
            job.cancel.set()
        if thread is not None:
            thread.join(timeout=10)

    # ---- immediate methods ---------------------------------------------------
    def _initialize(self, params: InitializeParams) -> InitializeResult:
        if protocol.major(params.protocol_version) != protocol.major(protocol.PROTOCOL_VERSION):
            raise RpcError(
                ErrorCode.VERSION_MISMATCH,
                f"client speaks protocol {params.protocol_version}, this runtime speaks {protocol.PROTOCOL_VERSION}",
                {"runtime_protocol_version": protocol.PROTOCOL_VERSION},
            )
        import llama_cpp

        from runtime.engine.devices import backend_name, list_devices

        self._initialized = True
        return InitializeResult(
            protocol_version=protocol.PROTOCOL_VERSION,
            lokal_version=__version__,
            llama_cpp_version=llama_cpp.__version__,
            backend=backend_name(),
            devices=list_devices(),
            capabilities=list(CAPABILITIES),
            pid=os.getpid(),
        )

    def _cancel(self, params: ChatCancelParams) -> ChatCancelResult:
        with self._job_lock:
            job = self._job
        if job is None or job.request_id != params.request_id:
            return ChatCancelResult(False)  # already finished: not an error, the reply is on its way
        job.cancel.set()
        return ChatCancelResult(True)

    def _shutdown(self, _params: Empty) -> ShutdownResult:
        self._stopping = True
        self._stop_job()
        self.hub.close()
        return ShutdownResult(True)


def internal_error(exc: BaseException) -> RpcError:
    return RpcError(ErrorCode.INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}", {"traceback": traceback.format_exc()})


def take_over_stdout() -> BinaryIO:
    """Reserve the real stdout for protocol lines; anything else written to fd 1 goes to stderr."""
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "wb", buffering=0)


def main() -> int:
    logging.basicConfig(level=os.environ.get("LOKAL_LOG_LEVEL", "WARNING"), stream=sys.stderr, format="runtime %(levelname)s %(name)s: %(message)s")
    out = take_over_stdout()
    server = RuntimeServer(sys.stdin.buffer, out)
    return server.serve()
