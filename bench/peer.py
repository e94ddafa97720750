"""llama.cpp's own llama-server as the benchmarks' peer (`--peer PATH`): started on a free loopback port, stopped after.

The peer is never part of the tests; a benchmark that is given one runs the same
requests against it, interleaved with Lokal's, and prints the ratios.
"""

from __future__ import annotations

import atexit
import http.client
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil


def exit_on_sigterm() -> None:
    """A benchmark stopped with SIGTERM exits through Python, so its servers are stopped too (atexit)."""
    signal.signal(signal.SIGTERM, lambda *_args: sys.exit(143))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_idle(window: float = 0.25, busy_share: float = 0.05, timeout: float = 15.0) -> float:
    """Wait until the processes this benchmark started use under `busy_share` of one core over `window` seconds,
    so what one server does after a run (saving its caches, say) is not charged to the next server's run.
    Returns the seconds waited."""
    me = psutil.Process()

    def cpu_seconds() -> float:
        total = 0.0
        for child in me.children(recursive=True):
            try:
                times = child.cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system
        return total

    started = time.monotonic()
    before = cpu_seconds()
    while time.monotonic() - started < timeout:
        time.sleep(window)
        now = cpu_seconds()
        if now - before < busy_share * window:
            break
        before = now
    return time.monotonic() - started


class LlamaServer:
    """One llama-server process; `args` are its own flags (model, threads, slots, speculation)."""

    def __init__(self, binary: str | Path, *args: str, ready_timeout: float = 300):
        self.binary = str(binary)
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
        self.command = [self.binary, "--host", "127.0.0.1", "--port", str(self.port), "--no-webui", *args]
        self.process = subprocess.Popen(self.command, stdout=self.log, stderr=subprocess.STDOUT)
        atexit.register(self.close)  # also when the benchmark is stopped (see exit_on_sigterm)
        self._wait_ready(ready_timeout)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                connection.request("GET", "/health")
                if connection.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)  # a child we do not control: polling its health endpoint is all it offers
        raise RuntimeError(f"llama-server was not ready in {timeout}s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(Path(self.log.name).read_text(errors="replace").splitlines()[-lines:])

    def log_lines(self, needle: str) -> list[str]:
        return [line for line in Path(self.log.name).read_text(errors="replace").splitlines() if needle in line]

    def openai(self, timeout: float = 600):
        import openai

        return openai.OpenAI(base_url=self.url, api_key="peer", max_retries=0, timeout=timeout)

    def chat(self, body: dict, timeout: float = 3600) -> dict:
        """A raw POST to the server's /v1/chat/completions (its timings included)."""
        return self._post("/v1/chat/completions", body, timeout)

    def _post(self, path: str, body: dict, timeout: float) -> dict:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
            return json.loads(connection.getresponse().read())
        finally:
            connection.close()

    def version(self) -> str:
        try:
            out = subprocess.run([self.binary, "--version"], capture_output=True, text=True, timeout=30)
            return (out.stdout + out.stderr).strip().splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            return "unknown"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        Path(self.log.name).unlink(missing_ok=True)

    def __enter__(self) -> "LlamaServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
