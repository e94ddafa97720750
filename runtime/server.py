"""The runtime process: JSON-RPC over stdin/stdout; replies decoded together, model loads alone.

Each method's lane, declared with its handle in runtime.protocol.methods, says where it runs
(its handler is in the one dispatch table, runtime/dispatch.py). The
reader thread parses each line and answers at once what needs no engine time
(initialize, chat.cancel, runtime.metrics, shutdown, ...), so a reply that is
streaming never blocks them; what waits on the network or the disk runs on a
small pool. Replies (chat.generate, the batch lane) go to the scheduler, which
decodes all of them together (runtime/scheduler); a client may have several in
flight, one per conversation. Model loads and unloads (the engine lane) run
alone, in their turn (job_slot.py). A client's job that breaks these rules (a
second reply in one conversation, anything while its load runs or waits, a load
while its replies run) is refused with BUSY and the id of the request in the way:
clients queue on their side, where they can show it.

The OpenAI-compatible API (`api.start`, runtime/api) is served from inside this
process, so its replies are decoded in the same batches as the client's, with
speculative decoding; its KV caches and saved states are its own (a reply never
reuses or restores a cache the other made). A job that has to wait for its turn
(behind a load, or for a free sequence) says so with a `job.waiting` notification.

stdout carries protocol lines only: at start the process moves its real stdout
to a private descriptor and points fd 1 at stderr, so nothing llama.cpp prints
can corrupt the stream. Lines reach it through a bounded queue and a writer
thread (output_writer.py): a client that stops reading has its streaming replies
dropped with OUTPUT_STALLED, and never holds up the engine, the API's replies
included.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import logging
import os
import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any, BinaryIO, Callable

from runtime import __version__, paths, protocol
from runtime.dispatch import ANSWERING, DispatchTable, OnText
from runtime.protocol import (
    ApiStartParams,
    ApiStartResult,
    ApiStopResult,
    Attachment,
    ChatCancelParams,
    ChatCancelResult,
    ChatDelta,
    ChatGenerateParams,
    ChatGenerateResult,
    CountTokensParams,
    CountTokensResult,
    Empty,
    ErrorCode,
    GenerationStats,
    InitializeParams,
    InitializeResult,
    JobWaiting,
    Lane,
    MetricsResult,
    ModelLoadParams,
    ModelLoadResult,
    ModelProgress,
    ModelUnloadResult,
    Notification,
    MetricsParams,
    Request,
    Response,
    RpcError,
    ShutdownResult,
    TokenLogprob,
    methods,
)
from runtime.documents.service import AttachmentService
from runtime.embeddings.model import EmbeddingModel
from runtime.documents.library import ChatModelView, DocumentLibrary
from runtime.hub.service import HubService
from runtime.job_slot import API, PROTOCOL, Job, JobSlot
from runtime.output_writer import OutputWriter, stream_limit_from_environment
from runtime.models.service import ModelsService

if TYPE_CHECKING:
    from runtime.api.service import ApiService

log = logging.getLogger("lokal.runtime")

CAPABILITIES = ["chat.stream", "chat.cancel", "kv.prefix_reuse", "model.progress", "chat.raw_prompt", "kv.saved_states", "context.overflow_trim", "api.serve"]

Finish = Callable[[Any, "RpcError | None"], None]  # a job's result, or its error


class RuntimeServer:
    def __init__(self, stdin: BinaryIO, stdout: BinaryIO):
        from runtime.engine.engine import Engine  # llama_cpp loads here, not at import of the protocol

        self._in = stdin
        self._output = OutputWriter(stdout, stream_limit_from_environment(), on_broken=self._client_gone)
        self.engine = Engine()
        self.slot = JobSlot()
        self._job_threads: set[threading.Thread] = set()
        self._job_threads_lock = threading.Lock()
        self._api_ids = itertools.count(1)
        self._api: ApiService | None = None  # made on the first api.start (aiohttp loads then)
        self._api_lock = threading.Lock()
        self._initialized = False
        self._stopping = False
        self.hub = HubService(self.notify)
        self.models = ModelsService()
        self.documents = DocumentLibrary(paths.data_dir() / "attachments", self._chat_model_view)
        self.attachments = AttachmentService(self.documents, self.notify, replying=lambda: bool(self.slot.jobs()))
        # Every method's handler; which thread runs it is its lane (runtime.protocol.methods).
        self.dispatch = DispatchTable()
        self.dispatch.handle(methods.INITIALIZE, self._initialize)
        self.dispatch.handle(methods.CHAT_CANCEL, self._cancel)
        self.dispatch.handle(methods.RUNTIME_METRICS, self._metrics)
        self.dispatch.handle(methods.SHUTDOWN, self._shutdown)
        self.dispatch.handle(methods.KV_STORE_INFO, lambda params: self.engine.kv_store_info(params.wait_for_writes))
        self.dispatch.handle(methods.KV_CLEAR, lambda _params: self.engine.kv_clear())
        self.dispatch.handle(methods.API_START, self._api_start)
        self.dispatch.handle(methods.API_STOP, self._api_stop)
        self.dispatch.handle(methods.MODEL_COUNT_TOKENS, self._count_tokens)
        self.dispatch.handle_job(methods.MODEL_LOAD, self._load)
        self.dispatch.handle_job(methods.MODEL_UNLOAD, self._unload)
        self.dispatch.handle_job(methods.CHAT_GENERATE, self._generate)
        self.hub.register(self.dispatch)
        self.models.register(self.dispatch)
        self.attachments.register(self.dispatch)
        if self.dispatch.missing():
            raise RuntimeError(f"no handler for {', '.join(self.dispatch.missing())}")
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="pool")

    # ---- output ------------------------------------------------------------
    def _send(self, line: bytes) -> None:
        self._output.send(line)

    def _client_gone(self) -> None:
        self._stopping = True

    def _stream_to_client(self, job: Job, conversation_id: str, dropped: threading.Event) -> OnText:
        """A reply's chat.delta lines (answer, reasoning, log-probabilities), from the engine thread: never blocks. If the client has stopped
        reading (too many lines wait unwritten), the reply is dropped: cancelled, and answered with OUTPUT_STALLED."""

        def on_delta(text: str, reasoning: str, logprobs: list[TokenLogprob]) -> None:
            if dropped.is_set():
                return
            if not self._output.offer(protocol.notification_line("chat.delta", ChatDelta(job.request_id, conversation_id, text, reasoning, logprobs))):
                dropped.set()
                log.warning("the client stopped reading: reply %r dropped", job.request_id)
                self.slot.cancel(job)

        return on_delta

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
        self._close()
        self._output.close()  # the last answers (shutdown's) written before the process exits
        return 0

    def _close(self) -> None:
        self._close_api()  # first: no new API job may come in
        self._stop_jobs()
        try:
            self.engine.unload()  # the scheduler's last work (saving the states of the replies that just ended) first
        except Exception:
            log.exception("unloading at shutdown failed")
        self.hub.close()  # running downloads pause, to resume at the next start

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
            spec = methods.METHODS.get(request.method)
            if spec is None:
                raise RpcError(ErrorCode.METHOD_NOT_FOUND, f"unknown method {request.method!r}", {"known": sorted(methods.METHODS)})
            if not self._initialized and spec not in (methods.INITIALIZE, methods.SHUTDOWN):
                raise RpcError(ErrorCode.NOT_INITIALIZED, "call initialize first")
            params = protocol.decode(spec.params, request.params)
            if spec.lane in (Lane.ENGINE, Lane.BATCH):
                self._start_job(request, params)
                return
            if spec.lane is Lane.POOL:
                self._pool.submit(self._run_in_pool, request, self.dispatch.handler(spec), params)
                return
            result = self.dispatch.handler(spec)(params)
            self._send(protocol.result_line(request.id, result))
        except RpcError as exc:
            self._send(protocol.error_line(request.id, exc))
        except Exception as exc:  # a bug: report it with its traceback, keep serving
            log.exception("request %s failed", request.method)
            self._send(protocol.error_line(request.id, internal_error(exc)))

    def _run_in_pool(self, request: Request, handler: Callable[[Any], Any], params: Any) -> None:
        answering = ANSWERING.set(request.id)
        try:
            line = protocol.result_line(request.id, handler(params))
        except RpcError as exc:
            line = protocol.error_line(request.id, exc)
        except Exception as exc:
            log.exception("request %s failed", request.method)
            line = protocol.error_line(request.id, internal_error(exc))
        finally:
            ANSWERING.reset(answering)
        self._send(line)

    # ---- engine jobs ---------------------------------------------------------
    def _start_job(self, request: Request, params: Any) -> None:
        conversation_id = params.conversation_id if isinstance(params, ChatGenerateParams) else None
        job = Job(request.id, request.method, PROTOCOL, conversation_id)
        in_the_way = self._in_the_way(job)
        if in_the_way is not None:
            raise RpcError(
                ErrorCode.BUSY,
                f"the runtime is busy with {in_the_way.method} (request {in_the_way.request_id!r}); try again when it finishes",
                {"running_request_id": in_the_way.request_id, "running_method": in_the_way.method},
            )
        dropped = threading.Event()
        on_text = self._stream_to_client(job, params.conversation_id, dropped) if request.method == "chat.generate" else None

        def finish(result: Any, error: RpcError | None) -> None:
            if dropped.is_set():
                result, error = None, output_stalled(self._output.stream_limit)
            self._send(self._answer_line(job, result, error))

        self.submit(job, params, on_text, finish)

    def _in_the_way(self, job: Job) -> Job | None:
        """The client's own job that `job` may not run beside (BUSY), if any."""
        for other in self.slot.jobs(PROTOCOL):
            if job.exclusive or other.exclusive or other.conversation_id == job.conversation_id:
                return other
        return None

    def _say_waiting(self, job: Job) -> None:
        if job.owner == PROTOCOL:
            self.notify("job.waiting", JobWaiting(job.request_id, job.method))  # behind others: say so rather than go quiet

    @staticmethod
    def _answer_line(job: Job, result: Any, error: RpcError | None) -> bytes:
        return protocol.error_line(job.request_id, error) if error is not None else protocol.result_line(job.request_id, result)

    def submit(self, job: Job, params: Any, on_text: OnText | None, finish: Finish) -> None:
        """Run `job` when its turn comes, on a thread of its own; `finish(result, error)` once it is over."""
        if job.method == "chat.generate" and job.arrived is None:
            # From the moment it is taken in (an API request: from its arrival, before its body was read):
            # a wave of prompts starting meanwhile waits for it (scheduler.py).
            job.arrived = self.engine.expect_reply()
        self.slot.join(job)
        if self.slot.would_wait(job):
            self._say_waiting(job)
        thread = threading.Thread(target=self._run_job, args=(job, params, on_text, finish), name=f"job-{job.method}", daemon=True)
        with self._job_threads_lock:
            self._job_threads.add(thread)
        thread.start()

    def _run_job(self, job: Job, params: Any, on_text: OnText | None, finish: Finish) -> None:
        result, error = None, None
        try:
            if self.slot.wait_turn(job):
                result = self._execute(job, params, on_text)
            else:
                result, error = cancelled_before_start(job, params)
        except RpcError as exc:
            error = exc
        except Exception as exc:
            log.exception("job %s failed", job.method)
            error = internal_error(exc)
        finally:
            if job.arrived is not None:
                job.arrived()
            self.slot.leave(job)
        try:
            finish(result, error)
        except Exception:
            log.exception("delivering the result of %s failed", job.method)
        with self._job_threads_lock:
            self._job_threads.discard(threading.current_thread())

    def _execute(self, job: Job, params: Any, on_text: OnText | None) -> Any:
        method = methods.METHODS.get(job.method)
        if method is None:
            raise RpcError(ErrorCode.METHOD_NOT_FOUND, job.method)
        return self.dispatch.job_handler(method)(params, job, on_text)

    def _load(self, params: ModelLoadParams, job: Job, _on_text: OnText | None) -> ModelLoadResult:
        return self.engine.load(params, lambda p: self.notify("model.progress", ModelProgress(params.path, p)), job.cancel)

    def _unload(self, _params: Empty, _job: Job, _on_text: OnText | None) -> ModelUnloadResult:
        return ModelUnloadResult(self.engine.unload())

    def _generate(self, params: ChatGenerateParams, job: Job, on_text: OnText | None) -> ChatGenerateResult:
        # Attached documents become their turns' text (whole, or the chunks retrieved): the engine sees text only.
        params, citations = self.documents.expand(params)
        stream = on_text or (lambda _text, _reasoning, _logprobs: None)
        result = self.engine.generate(
            params,
            job.cancel,
            lambda text: stream(text, "", []),
            job.request_id,
            job.owner,
            lambda: self._say_waiting(job),
            lambda reasoning: stream("", reasoning, []),
            job.arrived,
            lambda logprobs: stream("", "", logprobs),
        )
        result.citations = citations
        return result

    def _chat_model_view(self) -> ChatModelView | None:
        loaded = self.engine.loaded
        if loaded is None:
            return None
        llama = loaded.llama

        def count_tokens(text: str) -> int:
            # attachment.add and model.count_tokens count on the pool: never while a load or unload frees the model they count with.
            with self.engine.load_lock:
                if self.engine.loaded is not loaded:
                    raise RpcError(ErrorCode.NO_MODEL_LOADED, "the model was unloaded meanwhile: ask again once one is loaded")
                return len(llama.tokenize(text, add_bos=False, special=False))

        return ChatModelView(count_tokens, llama.n_ctx)

    def _count_tokens(self, params: CountTokensParams) -> CountTokensResult:
        view = self._chat_model_view()
        if view is None:
            raise RpcError(ErrorCode.NO_MODEL_LOADED, "no model is loaded: a text's tokens are counted with the loaded model")
        return CountTokensResult(view.count_tokens(params.text), view.n_ctx)

    def _stop_jobs(self) -> None:
        for job in self.slot.jobs():
            self.slot.cancel(job)
        with self._job_threads_lock:
            threads = list(self._job_threads)
        for thread in threads:
            thread.join(timeout=10)

    # ---- the API's way to the engine (runtime/api/backend.py's EngineJobs) -----------
    def served_model(self) -> ModelLoadResult | None:
        loaded = self.engine.loaded
        return loaded.info if loaded is not None else None

    def model_loading(self) -> bool:
        return any(job.method in ("model.load", "model.unload") for job in self.slot.jobs())

    def expect_reply(self) -> Callable[[], None]:
        return self.engine.expect_reply()

    def start_generation(self, params: ChatGenerateParams, on_text: OnText, finish: Finish, arrived: Callable[[], None] | None = None) -> Job:
        job = Job(f"api-{next(self._api_ids)}", "chat.generate", API, params.conversation_id, arrived=arrived)
        self.submit(job, params, on_text, finish)
        return job

    def cancel_job(self, job: Job) -> None:
        self.slot.cancel(job)

    def spell(self, tokens: list[int]) -> str:
        """Token ids of the loaded model as text (special tokens written out): RpcError for an id it does not have."""
        from runtime.engine.engine import given_prompt_tokens

        with self.engine.load_lock:  # never while a load or unload frees the model
            llama = self.engine.require_model().llama
            given_prompt_tokens(llama, tokens)
            return b"".join(llama.piece(token, special=True) for token in tokens).decode("utf-8", "replace")

    def tokenize(self, text: str, add_special: bool, parse_special: bool, with_pieces: bool) -> tuple[list[int], list[bytes]]:
        with self.engine.load_lock:  # never while a load or unload frees the model
            llama = self.engine.require_model().llama
            ids = llama.tokenize(text, add_bos=add_special, special=parse_special)
            return ids, [llama.piece(token, special=True) for token in ids] if with_pieces else []

    def embedding_model(self) -> EmbeddingModel | None:
        return self.documents.embedder

    def store_document(self, data: bytes, name: str, mime: str) -> Attachment:
        """A document of the API's (a `file` part), stored and read as attachment.add does; RpcError if it cannot be read."""
        info = self.documents.add(data, name, mime, "document")
        return Attachment("document", info.id, name, info.mime)

    def _api_start(self, params: ApiStartParams) -> ApiStartResult:
        with self._api_lock:
            if self._stopping:
                raise RpcError(ErrorCode.INVALID_REQUEST, "the runtime is shutting down")
            if self._api is None:
                from runtime.api.service import ApiService  # aiohttp loads here, only for a runtime that serves

                self._api = ApiService(self)
            return self._api.start(params)

    def _api_stop(self, _params: Empty) -> ApiStopResult:
        with self._api_lock:
            return ApiStopResult(self._api.stop() if self._api is not None else False)

    def _close_api(self) -> None:
        with self._api_lock:
            if self._api is not None:
                self._api.stop()

    # ---- immediate methods ---------------------------------------------------
    def _initialize(self, params: InitializeParams) -> InitializeResult:
        if protocol.major(params.protocol_version) != protocol.major(protocol.PROTOCOL_VERSION):
            raise RpcError(
                ErrorCode.VERSION_MISMATCH,
                f"client speaks protocol {params.protocol_version}, this runtime speaks {protocol.PROTOCOL_VERSION}",
                {"runtime_protocol_version": protocol.PROTOCOL_VERSION},
            )
        import llama_cpp

        from runtime.llama.devices import backend_name, gpu_backends, list_devices

        self._initialized = True
        return InitializeResult(
            protocol_version=protocol.PROTOCOL_VERSION,
            lokal_version=__version__,
            llama_cpp_version=llama_cpp.__version__,
            backend=backend_name(),
            devices=list_devices(),
            capabilities=list(CAPABILITIES),
            pid=os.getpid(),
            gpu_backends=gpu_backends(),
        )

    def _cancel(self, params: ChatCancelParams) -> ChatCancelResult:
        job = next((j for j in self.slot.jobs(PROTOCOL) if j.request_id == params.request_id), None)
        if job is None:
            return ChatCancelResult(False)  # already finished: not an error, the reply is on its way
        self.slot.cancel(job)
        return ChatCancelResult(True)

    def _metrics(self, params: MetricsParams) -> MetricsResult:
        # The live figures of the client's own reply (of the conversation it asks about), never the API's.
        metrics = self.engine.metrics(PROTOCOL, params.conversation_id)
        api = self._api
        metrics.api_requests = api.requests_in_flight() if api is not None else 0
        return metrics

    def _shutdown(self, _params: Empty) -> ShutdownResult:
        self._stopping = True
        self._close()
        return ShutdownResult(True)


def cancelled_before_start(job: Job, params: Any) -> tuple[Any, RpcError | None]:
    """A job cancelled while it waited for its turn: a reply ends empty, as a cancelled one does; anything else never ran."""
    if job.method == "chat.generate":
        return ChatGenerateResult(job.request_id, params.conversation_id, "", "cancelled", GenerationStats()), None
    return None, RpcError(ErrorCode.UNKNOWN_REQUEST, f"{job.method} was cancelled before it started")


def output_stalled(limit: int) -> RpcError:
    return RpcError(
        ErrorCode.OUTPUT_STALLED,
        f"the client stopped reading the runtime's output ({limit} lines waited unread), so this reply was dropped; "
        "the runtime goes on serving",
        {"unread_lines": limit},
    )


def internal_error(exc: BaseException) -> RpcError:
    return RpcError(ErrorCode.INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}", {"traceback": traceback.format_exc()})


def take_over_stdout() -> BinaryIO:
    """Reserve the real stdout for protocol lines; anything else written to fd 1 goes to stderr."""
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "wb", buffering=0)


def main() -> int:
    from runtime.log_files import start_logging
    from runtime.private_files import restrict_umask, tighten_own_folders

    restrict_umask()  # before anything is created: KV states, download plans, logs are the user's alone
    start_logging("runtime", stderr_prefix="runtime")
    tighten_own_folders()
    out = take_over_stdout()
    server = RuntimeServer(sys.stdin.buffer, out)
    return server.serve()
