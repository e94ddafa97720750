"""`lokal --self-test PATH.gguf`: proves an installed or frozen Lokal works end to end, headless.

It opens the main window offscreen; the window starts its runtime from this same executable
(the frozen app runs itself with `runtime`), and through the window's own link to it the
check loads the model, generates a few tokens, prints one line and exits 0. Anything else
exits non-zero with the reason. Installers and CI run it inside the built bundle, where a
missing library or Qt plugin only shows up when something really runs.

Everything is event-driven on the GUI thread, as it is for a user: the link's callbacks
move the check along, and a timer bounds it. The user's own data is never touched: the
Lokal directories point at a temporary folder for the duration of the check.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

TOKENS = 8
DEFAULT_TIMEOUT_S = 300.0
PROMPT = "Write a long story about a lighthouse keeper and the sea."

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_TIMEOUT = 3

LOKAL_DIRS = ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR")


class SelfTestFailure(Exception):
    pass


# ---- the coupling to the window: the one place that knows how app.main builds it ----------


def open_main_window():
    """The window a user gets, without loading a model of its own (the check loads the given one)."""
    from app.main import create_main_window

    return create_main_window(autoload=False)


def runtime_link_of(window):
    """The window's connection to its runtime process (app.runtime_link.RuntimeLink)."""
    return window.link


# ---- the check ---------------------------------------------------------------------------


def check_model_path(path: Path) -> None:
    if not path.is_file():
        raise SelfTestFailure(f"no model file at {path}")
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise SelfTestFailure(f"{path} is not a GGUF file")


def same_executable(pid: int) -> str:
    """The runtime's executable; raises unless it is this very program (the frozen app has no Python to fall back on)."""
    import psutil

    runtime_exe = os.path.realpath(psutil.Process(pid).exe())
    if runtime_exe != os.path.realpath(sys.executable):
        raise SelfTestFailure(f"the runtime runs {runtime_exe}, not this executable {os.path.realpath(sys.executable)}")
    return runtime_exe


def _make_check_class():
    from PySide6.QtCore import QObject, QTimer, Signal

    from app.ui import language
    from runtime.protocol import ChatGenerateParams, ChatGenerateResult, ChatMessage, ErrorCode, ModelLoadParams, ModelLoadResult, methods

    class RuntimeCheck(QObject):
        """Drives the window's runtime link: ready -> same executable -> model.load -> chat.generate."""

        sig_finished = Signal(int, str)  # exit code, the one line to print

        def __init__(self, window, model: Path, timeout_s: float):
            super().__init__(window)
            self.window = window
            self.link = runtime_link_of(window)
            self.model = model
            self.timeout_ms = int(timeout_s * 1000)
            self.done = False
            self.pid = 0
            self.started = self.loaded = 0.0
            self.link.sig_ready.connect(self._on_ready)
            self.link.sig_crashed.connect(self._on_crashed)
            self._timer = QTimer(self)
            self._timer.setSingleShot(True)
            self._timer.timeout.connect(self._on_timeout)

        def start(self) -> None:
            self._timer.start(self.timeout_ms)
            if self.link.info is not None:  # the runtime was ready before the check connected
                self._on_ready(self.link.info)

        def _finish(self, code: int, line: str) -> None:
            if self.done:
                return
            self.done = True
            self._timer.stop()
            self.link.sig_ready.disconnect(self._on_ready)
            self.link.sig_crashed.disconnect(self._on_crashed)
            self.sig_finished.emit(code, line)

        def _fail(self, reason: str, code: int = EXIT_FAILED) -> None:
            self._finish(code, f"lokal self-test: FAILED: {reason}")

        def _on_ready(self, info) -> None:
            if self.pid:
                self._fail("the runtime restarted during the check")
                return
            self.info = info
            self.pid = self.link.pid or info.pid
            try:
                same_executable(self.pid)
            except (SelfTestFailure, OSError) as exc:
                self._fail(str(exc))
                return
            self.started = time.perf_counter()
            self.link.call(methods.MODEL_LOAD, ModelLoadParams(path=str(self.model), n_ctx=512), self._on_loaded, self._on_error, self.timeout_ms)

        def _on_loaded(self, result: ModelLoadResult) -> None:
            self.loaded = time.perf_counter()
            self.load_result = result
            params = ChatGenerateParams(
                conversation_id="self-test", messages=[ChatMessage("user", PROMPT)], max_tokens=TOKENS, temperature=0.0, seed=1
            )
            self.link.call(methods.CHAT_GENERATE, params, self._on_generated, self._on_error, self.timeout_ms)

        def _on_generated(self, reply: ChatGenerateResult) -> None:
            done = time.perf_counter()
            if reply.stats.completion_tokens != TOKENS:
                self._fail(f"generated {reply.stats.completion_tokens} tokens instead of {TOKENS} (finish reason {reply.finish_reason})")
                return
            if not self.window.isVisible():
                self._fail("the main window is not visible")
                return
            title = self.window.windowTitle() or "(untitled)"
            self._finish(
                EXIT_OK,
                f"lokal self-test: ok: window {title!r} shown; runtime {self.info.lokal_version} "
                f"(pid {self.pid}, {self.info.backend}, same executable); {self.model.name} loaded in "
                f"{self.loaded - self.started:.2f} s; {TOKENS} tokens (prompt included) in {done - self.loaded:.2f} s: {reply.text!r}; "
                f"languages: {', '.join(language.LANGUAGES)}",
            )

        def _on_error(self, error) -> None:
            tail = self.link.stderr_tail.strip()
            # The link's own codes mean no answer came: then the runtime's stderr is the only clue.
            detail = f"; the runtime's last words:\n{tail}" if tail and error.code in (ErrorCode.RUNTIME_DIED, ErrorCode.REQUEST_TIMEOUT) else ""
            self._fail(f"the runtime answered error {error.code}: {error.message}{detail}")

        def _on_crashed(self, how: str) -> None:
            self._fail(f"the runtime stopped: {how}")

        def _on_timeout(self) -> None:
            self.link.kill()
            self._fail(f"no result within {self.timeout_ms / 1000:.0f} s", EXIT_TIMEOUT)

    return RuntimeCheck


def timeout_from_env() -> float:
    raw = os.environ.get("LOKAL_SELF_TEST_TIMEOUT", "")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT_S
    except ValueError:
        raise SelfTestFailure(f"LOKAL_SELF_TEST_TIMEOUT must be a number of seconds, not {raw!r}") from None
    if value <= 0:
        raise SelfTestFailure(f"LOKAL_SELF_TEST_TIMEOUT must be positive, not {raw!r}")
    return value


def run(model: str | os.PathLike, timeout_s: float | None = None) -> int:
    path = Path(model).expanduser().resolve()
    try:
        check_model_path(path)
        timeout_s = timeout_from_env() if timeout_s is None else timeout_s
    except SelfTestFailure as exc:
        print(f"lokal self-test: FAILED: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    saved = {name: os.environ.get(name) for name in (*LOKAL_DIRS, "QT_QPA_PLATFORM")}
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        # ignore_cleanup_errors: on Windows a file the window still holds open cannot be deleted yet.
        with tempfile.TemporaryDirectory(prefix="lokal-self-test-", ignore_cleanup_errors=True) as scratch:
            for name in LOKAL_DIRS:
                os.environ[name] = str(Path(scratch) / name.lower())
            return _run_with_window(path, timeout_s)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_with_window(model: Path, timeout_s: float) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.ui import language

    app = QApplication.instance() or QApplication([sys.argv[0]])
    missing = language.missing_catalogues()
    if missing:  # an installer that left out the translations: the window would fall back to English
        names = ", ".join(path.name for path in missing)
        print(f"lokal self-test: FAILED: translation catalogue(s) missing or unreadable: {names} (in {language.i18n_dir()})", file=sys.stderr)
        return EXIT_FAILED
    verdict: list[tuple[int, str]] = []
    try:
        window = open_main_window()
    except Exception as exc:  # a window that cannot even be built is the first thing to report
        print(f"lokal self-test: FAILED: the main window could not be opened: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    window.show()
    check = _make_check_class()(window, model, timeout_s)

    def _on_finished(code: int, line: str) -> None:
        verdict.append((code, line))
        app.quit()

    check.sig_finished.connect(_on_finished)
    QTimer.singleShot(0, check.start)
    app.exec()
    window.close()
    code, line = verdict[0] if verdict else (EXIT_FAILED, "lokal self-test: FAILED: the event loop ended without a result")
    print(line, file=sys.stdout if code == EXIT_OK else sys.stderr, flush=True)
    return code
