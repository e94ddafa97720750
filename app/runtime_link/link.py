"""RuntimeLink: the runtime process driven through QProcess, with no thread and no blocking call.

readyRead -> whole lines -> runtime.protocol.parse_line -> a response completes
its Call, a notification becomes a signal. Calls name their method by its typed
handle (`link.call(methods.CHAT_GENERATE, params, on_result)`, runtime.protocol.methods):
they take its params dataclass and their callbacks get its result dataclass,
decoded once here, and mypy checks both against the handle; notifications are
decoded too (protocol.TOPICS). Jobs (the engine and batch lanes) are queued here, in the order
they were asked for, and sent only when the runtime takes them, because it
refuses the others with BUSY: a model load or unload (engine lane) alone,
replies (chat.generate, batch lane) several at once but one per conversation.
A liveness check (runtime.metrics, answered at once even
mid-reply) catches a runtime that hangs; an unexpected exit fails every
waiting call, says how the process ended, and starts a new one.

Lines are bounded (MAX_LINE_BYTES): a runtime that writes a longer one, or an
endless one, is broken, and is treated as one that hangs: killed, with the
reason in the crash report, and restarted. Each read searches only the bytes
that came with it for the end of the line, so a long line costs its length
once, not once per read (issue #27).
"""

from __future__ import annotations

import collections
import enum
import itertools
import logging
import signal
import time
from typing import Any, Callable, Generic, Sequence, TypeVar

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from runtime import protocol
from runtime.client import log_remote_traceback, runtime_command
from runtime.protocol import (
    ChatCancelParams,
    ChatDelta,
    ErrorCode,
    InitializeParams,
    InitializeResult,
    Lane,
    Method,
    ModelProgress,
    Notification,
    Response,
    RpcError,
    methods,
)

log = logging.getLogger("lokal.runtime_link")

HEARTBEAT_MS = 5_000
HEARTBEAT_TIMEOUT_MS = 15_000
INITIALIZE_TIMEOUT_MS = 60_000
RESTART_DELAY_MS = 300
STDERR_LINES = 40
LINE_SLICE_S = 0.008
# The longest line the window takes from the runtime. Its largest answers are a reply's whole text
# (a full 128k-token context is a few MiB of JSON) and the hub's listings; 64 MiB leaves room many
# times over and still bounds what a broken runtime can make the window hold.
MAX_LINE_BYTES = 64 * 1024 * 1024
STDERR_LINE_BYTES = 64 * 1024  # a longer stderr line is cut: only its start is shown in a crash report

P = TypeVar("P")
R = TypeVar("R")


class ConnectionState(enum.Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    BUSY = "busy"  # jobs run (a load, replies)
    CRASHED = "crashed"
    RESTARTING = "restarting"


class Call(Generic[P, R]):
    """One request: its id, and what to do with its answer (called on the GUI thread)."""

    def __init__(
        self,
        request_id: int,
        method: Method[P, R],
        params: P,
        on_result: Callable[[R], None] | None,
        on_error: Callable[[RpcError], None] | None,
        timeout_ms: int | None,
    ):
        self.id = request_id
        self.method = method
        self.params = params
        self.on_result = on_result
        self.on_error = on_error
        self.timeout_ms = timeout_ms
        self.timer: QTimer | None = None
        self.sent = False
        self.done = False

    @property
    def lane(self) -> Lane:
        return self.method.lane

    @property
    def is_engine_job(self) -> bool:
        """Queued here until the runtime takes it (engine or batch lane)."""
        return self.lane in (Lane.ENGINE, Lane.BATCH)

    @property
    def conversation_id(self) -> str | None:
        conversation_id = getattr(self.params, "conversation_id", None)
        return conversation_id if isinstance(conversation_id, str) else None

    def may_run_beside(self, other: Call[Any, Any]) -> bool:
        """Whether the runtime takes this job while `other` runs (runtime/server.py's BUSY rule)."""
        return self.lane is Lane.BATCH and other.lane is Lane.BATCH and self.conversation_id != other.conversation_id


class RuntimeLink(QObject):
    sig_state_changed = Signal(object)  # ConnectionState
    sig_ready = Signal(object)  # InitializeResult, after every (re)start
    sig_crashed = Signal(str)  # how the process ended, in words, with its last stderr lines
    sig_notification = Signal(str, object)  # method, its dataclass (protocol.NOTIFICATIONS)
    sig_delta = Signal(object, str)  # request id, text (the answer only)
    sig_reasoning_delta = Signal(object, str)  # request id, reasoning text (a thinking model's, kept apart from the answer)
    sig_progress = Signal(str, float)  # model path, 0..1
    sig_queue_changed = Signal(int)  # engine jobs waiting for their turn

    def __init__(self, command: Sequence[str] | None = None, env: dict[str, str] | None = None, auto_restart: bool = True, parent: QObject | None = None):
        super().__init__(parent)
        self._command = list(command or runtime_command())
        self._env = env
        self.auto_restart = auto_restart
        self.state = ConnectionState.STOPPED
        self.info: InitializeResult | None = None
        self.restarts = 0
        self._ids = itertools.count(1)
        self._pending: dict[int, Call[Any, Any]] = {}
        self._queue: collections.deque[Call[Any, Any]] = collections.deque()
        self._jobs: list[Call[Any, Any]] = []  # in flight
        self._buffer = bytearray()
        self.reading_cpu_s = 0.0  # the GUI thread's CPU time spent on the runtime's lines, all told (app/chat/render_pace.py)
        self._scanned = 0  # how much of _buffer is known to hold no newline
        self.max_line_bytes = MAX_LINE_BYTES
        self._refused: QProcess | None = None  # a process killed for an over-long line: its output is dropped
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._stderr_buffer = bytearray()
        self._closing = False
        self._process: QProcess | None = None
        self.heartbeat_timeout_ms = HEARTBEAT_TIMEOUT_MS
        self._heartbeat = QTimer(self)
        self._heartbeat.setInterval(HEARTBEAT_MS)
        self._heartbeat.timeout.connect(self._on_heartbeat)
        self._heartbeat_call: Call[Any, Any] | None = None

    # ---- lifetime ------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        if self._process is None or self._process.state() == QProcess.ProcessState.NotRunning:
            return None
        return int(self._process.processId())

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def start(self) -> None:
        self._closing = False
        self._spawn(ConnectionState.STARTING)

    def _spawn(self, state: ConnectionState) -> None:
        self._set_state(state)
        self._buffer.clear()
        self._scanned = 0
        process = QProcess(self)
        if self._env is not None:
            env = QProcessEnvironment()
            for key, value in self._env.items():
                env.insert(key, value)
        else:
            env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONUNBUFFERED", "1")
        process.setProcessEnvironment(env)
        process.readyReadStandardOutput.connect(self._on_stdout)
        process.readyReadStandardError.connect(self._on_stderr)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_process_error)
        self._process = process
        process.start(self._command[0], self._command[1:])
        # initialize goes first, straight to the process: it is never queued behind an engine job.
        self._send_now(self._make_call(methods.INITIALIZE, InitializeParams(protocol.PROTOCOL_VERSION, "lokal-app"), self._on_initialized, self._on_initialize_failed, INITIALIZE_TIMEOUT_MS))

    def close(self, timeout_ms: int = 5_000) -> None:
        """Shut the runtime down (it exits when its stdin closes); kill it if it lingers."""
        self._closing = True
        self._heartbeat.stop()
        process, self._process = self._process, None
        self._fail_all(RpcError(ErrorCode.RUNTIME_DIED, "the runtime was shut down"))
        if process is None:
            self._set_state(ConnectionState.STOPPED)
            return
        # Nothing from this process may reach the link after close: its signals are cut first.
        for process_signal in (process.finished, process.readyReadStandardOutput, process.readyReadStandardError, process.errorOccurred):
            process_signal.disconnect()
        if process.state() != QProcess.ProcessState.NotRunning:
            process.write(protocol.request_line(0, methods.SHUTDOWN.name))
            process.closeWriteChannel()
            if not process.waitForFinished(timeout_ms):
                process.kill()
                process.waitForFinished(1_000)
        process.deleteLater()
        self._set_state(ConnectionState.STOPPED)

    def kill(self) -> None:
        """Kill the process at once (the user's last resort for a stuck load); it restarts like after a crash."""
        if self._process is not None:
            self._process.kill()

    # ---- requests ------------------------------------------------------------
    def call(
        self,
        method: Method[P, R],
        params: P | None = None,
        on_result: Callable[[R], None] | None = None,
        on_error: Callable[[RpcError], None] | None = None,
        timeout_ms: int | None = None,
        first: bool = False,
    ) -> Call[P, R]:
        """Send `method` (a handle of runtime.protocol.methods) with its params dataclass (None: its defaults);
        engine jobs wait for their turn, `first` jumps the queue.

        Exactly one of the callbacks runs, later, on this thread: on_result with the method's result dataclass, or on_error.
        """
        call = self._make_call(method, protocol.params_for(method, params), on_result, on_error, timeout_ms)
        if call.is_engine_job:
            if first:
                self._queue.appendleft(call)
            else:
                self._queue.append(call)
            self.sig_queue_changed.emit(len(self._queue))
            self._pump()
        elif self.state in (ConnectionState.READY, ConnectionState.BUSY):
            self._send_now(call)
        else:
            QTimer.singleShot(0, lambda: self._finish(call, error=RpcError(ErrorCode.RUNTIME_DIED, f"the runtime is {self.state.value}")))
        return call

    def cancel(self, call: Call[Any, Any]) -> None:
        """Stop a job: drop it if it still waits in the queue, else ask the runtime to cancel it."""
        if call.done:
            return
        if call in self._queue:
            self._queue.remove(call)
            self.sig_queue_changed.emit(len(self._queue))
            self._finish(call, error=RpcError(ErrorCode.UNKNOWN_REQUEST, "cancelled before it started"))
            return
        if call.sent:
            self.call(methods.CHAT_CANCEL, ChatCancelParams(call.id), timeout_ms=10_000)

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def jobs(self) -> list[Call[Any, Any]]:
        """The jobs the runtime has now."""
        return list(self._jobs)

    def _make_call(
        self,
        method: Method[P, R],
        params: P,
        on_result: Callable[[R], None] | None,
        on_error: Callable[[RpcError], None] | None,
        timeout_ms: int | None,
    ) -> Call[P, R]:
        return Call(next(self._ids), method, params, on_result, on_error, timeout_ms)

    def _send_now(self, call: Call[Any, Any]) -> None:
        if self._process is None:
            self._finish(call, error=RpcError(ErrorCode.RUNTIME_DIED, "the runtime is not running"))
            return
        self._pending[call.id] = call
        call.sent = True
        if call.timeout_ms:
            call.timer = QTimer(self)
            call.timer.setSingleShot(True)
            call.timer.timeout.connect(lambda c=call: self._on_call_timeout(c))
            call.timer.start(call.timeout_ms)
        self._process.write(protocol.request_line(call.id, call.method.name, call.params))

    def _pump(self) -> None:
        """Send every queued job the runtime takes now, in order; none jumps a queued load, nor its conversation's earlier reply."""
        if not self._queue or self.state not in (ConnectionState.READY, ConnectionState.BUSY):
            return
        sent = False
        ahead: list[Call[Any, Any]] = []
        for call in list(self._queue):
            if all(call.may_run_beside(other) for other in self._jobs + ahead):
                self._queue.remove(call)
                self._jobs.append(call)
                self._send_now(call)
                sent = True
            else:
                ahead.append(call)
        if sent:
            self.sig_queue_changed.emit(len(self._queue))
            self._set_state(ConnectionState.BUSY)

    def _finish(self, call: Call[Any, Any], result: Any = None, error: RpcError | None = None) -> None:
        if call.done:
            return
        call.done = True
        self._pending.pop(call.id, None)
        if call.timer is not None:
            call.timer.stop()
            call.timer.deleteLater()
            call.timer = None
        if call in self._jobs:
            self._jobs.remove(call)
            if not self._jobs and self.state == ConnectionState.BUSY:
                self._set_state(ConnectionState.READY)
        if error is not None:
            if call.on_error is not None:
                call.on_error(error)
        elif call.on_result is not None:
            call.on_result(result)
        self._pump()

    def _fail_all(self, error: RpcError) -> None:
        calls = list(self._pending.values()) + list(self._queue)
        self._queue.clear()
        self._jobs.clear()
        for call in calls:
            self._finish(call, error=error)
        self._heartbeat_call = None

    def _on_call_timeout(self, call: Call[Any, Any]) -> None:
        if call is self._heartbeat_call:
            # The runtime answers metrics at once even mid-reply: silence this long means it hangs.
            self._stderr.append("[lokal] the runtime stopped answering; killing it")
            self.kill()
            return
        if call.is_engine_job:
            self.cancel(call)
        self._finish(call, error=RpcError(ErrorCode.REQUEST_TIMEOUT, f"{call.method.name} got no answer within {(call.timeout_ms or 0) / 1000:.0f} s"))

    # ---- process output --------------------------------------------------------
    def _on_stdout(self) -> None:
        process = self.sender()
        if process is self._refused and process is not None:
            process.readAllStandardOutput()
            return
        if process is not self._process or process is None:
            return
        self._buffer += process.readAllStandardOutput().data()
        self._drain()

    def _drain(self) -> None:
        started = time.thread_time()
        try:
            self._drain_slice()
        finally:
            self.reading_cpu_s += time.thread_time() - started

    def _drain_slice(self) -> None:
        # A burst (hundreds of model.progress lines) is handled in slices, so the window keeps painting.
        deadline = time.perf_counter() + LINE_SLICE_S
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end < 0:
                self._scanned = len(self._buffer)
                if self._scanned > self.max_line_bytes:
                    self._refuse_long_line()
                return
            if end > self.max_line_bytes:
                self._refuse_long_line()
                return
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]  # cheap: bytearray drops bytes at its front without moving the rest
            self._scanned = 0
            if line.strip():
                self._on_line(line)
            if time.perf_counter() > deadline and self._buffer.find(b"\n") >= 0:
                QTimer.singleShot(0, self._drain)
                return

    def _refuse_long_line(self) -> None:
        """A protocol error no later line can repair: the runtime is killed, as one that hangs is, and restarts."""
        self._stderr.append(f"[lokal] the runtime sent a line longer than {self.max_line_bytes} bytes (the most the window takes); killing it")
        self._buffer.clear()
        self._scanned = 0
        self._refused = self._process
        self.kill()

    def _on_line(self, line: bytes) -> None:
        try:
            message = protocol.parse_line(line)
        except RpcError:
            self._stderr.append(f"[unparseable line from runtime] {line[:200]!r}")
            return
        if isinstance(message, Response):
            call = self._pending.get(message.id) if isinstance(message.id, int) else None
            if call is None:
                if message.error is not None:
                    self._stderr.append(f"[unrouted error from runtime] {message.error.message}")
                return
            if message.error is not None:
                log_remote_traceback(log, call.method.name, message.error)
                self._finish(call, error=message.error)
                return
            try:
                result = protocol.decode_result(call.method, message.result)
            except RpcError as exc:
                self._finish(call, error=exc)
                return
            self._finish(call, result=result)
        elif isinstance(message, Notification):
            topic = protocol.TOPICS.get(message.method)
            if topic is None:
                return  # from a newer runtime: nothing here knows what to do with it
            try:
                params = protocol.decode(topic.params, message.params, "params")
            except RpcError as exc:
                self._stderr.append(f"[malformed {message.method} from runtime] {exc.message}")
                return
            if isinstance(params, ChatDelta):
                if params.reasoning:  # first: a delta that carries both ends the thinking, then starts the answer
                    self.sig_reasoning_delta.emit(params.request_id, params.reasoning)
                self.sig_delta.emit(params.request_id, params.text)
            elif isinstance(params, ModelProgress):
                self.sig_progress.emit(params.path, params.progress)
            self.sig_notification.emit(message.method, params)

    def _on_stderr(self) -> None:
        process = self.sender()
        if not isinstance(process, QProcess):
            return
        self._stderr_buffer += process.readAllStandardError().data()
        *lines, rest = self._stderr_buffer.split(b"\n")
        if len(rest) > STDERR_LINE_BYTES:  # an endless stderr line: its start is kept, the rest dropped
            lines.append(rest[:STDERR_LINE_BYTES] + " [cut]".encode())
            rest = bytearray()
        self._stderr_buffer = bytearray(rest)
        for line in lines:
            self._stderr.append(line.decode("utf-8", errors="replace"))

    # ---- handshake and liveness --------------------------------------------------
    def _on_initialized(self, info: InitializeResult) -> None:
        self.info = info
        self._heartbeat.start()
        self._set_state(ConnectionState.READY)
        self.sig_ready.emit(self.info)
        self._pump()

    def _on_initialize_failed(self, error: RpcError) -> None:
        if error.code == ErrorCode.RUNTIME_DIED:
            return  # the exit handler already says why
        self.auto_restart = False  # a version mismatch or a broken install: restarting would loop
        self.sig_crashed.emit(self.tr("the runtime refused to start: {reason}").format(reason=error.message))
        self.kill()

    def set_heartbeat(self, interval_ms: int, timeout_ms: int) -> None:
        self._heartbeat.setInterval(interval_ms)
        self.heartbeat_timeout_ms = timeout_ms

    def _on_heartbeat(self) -> None:
        if self._heartbeat_call is not None and not self._heartbeat_call.done:
            return
        self._heartbeat_call = self.call(methods.RUNTIME_METRICS, None, on_error=lambda _e: None, timeout_ms=self.heartbeat_timeout_ms)

    # ---- unexpected exits --------------------------------------------------------
    def _on_process_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart and self.sender() is self._process:
            self.auto_restart = False
            self._on_finished(-1, QProcess.ExitStatus.CrashExit)

    def _how_it_ended(self, returncode: int) -> str:
        """runtime.client.describe_exit, in the window's language: 'it was killed by SIGKILL'."""
        if returncode >= 0:
            return self.tr("it exited with code {code}").format(code=returncode)
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        if name == "SIGABRT":
            return self.tr("it was killed by {signal} (llama.cpp aborted)").format(signal=name)
        return self.tr("it was killed by {signal}").format(signal=name)

    def _on_finished(self, exit_code: int, exit_status: QProcess.ExitStatus) -> None:
        process = self.sender() if isinstance(self.sender(), QProcess) else self._process
        if self._closing or process is not self._process:
            return
        self._heartbeat.stop()
        # On POSIX a crashed child's "exit code" is the signal that ended it.
        returncode = -exit_code if exit_status == QProcess.ExitStatus.CrashExit and exit_code > 0 else exit_code
        if process is not None:
            self._on_stderr_from(process)
        self._process = None
        if process is not None and process.error() == QProcess.ProcessError.FailedToStart:
            description = self.tr("The Lokal runtime could not be started ({command}): {reason}.").format(
                command=" ".join(self._command), reason=process.errorString()
            )
        else:
            description = self.tr("The Lokal runtime stopped unexpectedly: {how}.").format(how=self._how_it_ended(returncode))
        tail = self.stderr_tail.strip()
        if tail:
            description += "\n" + "\n".join(tail.splitlines()[-8:])
        self._set_state(ConnectionState.CRASHED)
        self._fail_all(RpcError(ErrorCode.RUNTIME_DIED, description))
        self.sig_crashed.emit(description)
        if self.auto_restart:
            self.restarts += 1
            QTimer.singleShot(RESTART_DELAY_MS, self._restart)

    def _on_stderr_from(self, process: QProcess) -> None:
        data = process.readAllStandardError().data()
        if data:
            self._stderr_buffer += data
        for line in bytes(self._stderr_buffer).split(b"\n"):
            if line.strip():
                self._stderr.append(line.decode("utf-8", errors="replace"))
        self._stderr_buffer.clear()

    def _restart(self) -> None:
        if not self._closing and self._process is None:
            self._spawn(ConnectionState.RESTARTING)

    def _set_state(self, state: ConnectionState) -> None:
        if state != self.state:
            self.state = state
            self.sig_state_changed.emit(state)

