"""`lokal serve` as a real child process on a free loopback port, for the API and window tests."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import http.client

from waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1"


class Reply:
    def __init__(self, status: int, headers: dict, body: bytes):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.body = body

    def json(self):
        return json.loads(self.body)


class Served:
    """One `lokal serve --json` process: its events, URL and key; the API itself runs in its runtime child."""

    def __init__(self, *args: str, model: str | None = None, n_ctx: int | None = 1024, env: dict | None = None, root: Path = ROOT):
        """`root`: the source tree to run (benchmarks compare another checkout of Lokal with this one); `n_ctx`
        None: no --n-ctx, the model's load settings decide."""
        cmd = [sys.executable, "-m", "app", "serve", "--port", "0", "--json", *(["--n-ctx", str(n_ctx)] if n_ctx is not None else []), *args]
        if model:
            cmd += ["--model", model]
        self.process = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or dict(os.environ))
        self.events: queue.Queue[dict] = queue.Queue()
        self.all_events: list[dict] = []  # every event, also those wait_event consumed
        self.stderr: list[str] = []
        threading.Thread(target=self._read_events, daemon=True).start()
        assert self.process.stdout is not None and self.process.stderr is not None  # both piped
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr or []), daemon=True).start()
        listening = self.wait_event("listening", timeout=60)
        self.url = listening["url"]  # http://127.0.0.1:PORT/v1
        self.port = listening["port"]
        self.key_file = Path(listening["key_file"])
        self.key = self.key_file.read_text().strip()

    def _read_events(self) -> None:
        for line in self.process.stdout or []:
            event = json.loads(line)
            self.all_events.append(event)
            self.events.put(event)

    def wait_event(self, name: str, timeout: float, **match) -> dict:
        """The next `name` event whose fields match; the events before it are consumed."""

        def next_match() -> dict | None:
            while True:
                try:
                    event = self.events.get_nowait()
                except queue.Empty:
                    return None
                if event["event"] == name and all(event.get(k) == v for k, v in match.items()):
                    return event

        return wait_until(next_match, timeout, lambda: f"a {name!r} event from lokal serve; stderr:\n{''.join(self.stderr[-30:])}")

    def wait_ready(self, timeout: float = 120) -> None:
        self.wait_event("state", timeout, state="ready")

    @property
    def root(self) -> str:
        return self.url[: -len("/v1")]

    def openai(self, key: str | None = None, timeout: float = 120):
        import openai

        # No retries: a 429 or 503 must reach the test, not be retried away by the client.
        return openai.OpenAI(base_url=self.url, api_key=self.key if key is None else key, max_retries=0, timeout=timeout)

    def http(self, method: str, path: str, body: bytes | dict | None = None, key: str | None = "default", headers: dict | None = None, timeout: float = 60) -> "Reply":
        """A raw request (for what the openai client will not send: malformed JSON, no key, ...)."""
        headers = dict(headers or {})
        if key is not None:
            headers["Authorization"] = f"Bearer {self.key if key == 'default' else key}"
        if isinstance(body, dict):
            body = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json")
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return Reply(response.status, dict(response.getheaders()), response.read())
        finally:
            connection.close()

    @property
    def restarts(self) -> int:
        """How often `lokal serve` had to start its runtime again (it says so in each state event)."""
        return max((e["restarts"] for e in self.all_events if e["event"] == "state"), default=0)

    def health(self) -> dict:
        """The details /health gives to a caller with the key."""
        return self.http("GET", "/health").json()

    def wait_health(self, timeout: float = 30, **match) -> dict:
        """Poll /health until it matches (tests only: the window listens to events instead)."""
        last: list[dict] = []

        def matching() -> dict | None:
            last[:] = [self.health()]
            return last[0] if all(last[0].get(k) == v for k, v in match.items()) else None

        return wait_until(matching, timeout, lambda: f"/health matching {match} (last: {last})", interval=0.05)

    def close(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


@contextmanager
def serving(model, *args: str):
    """A ready `lokal serve` of `model` with one thread (plus `args`), for a module-scoped fixture; it must stop cleanly."""
    server = Served("--n-threads", "1", *args, model=str(model))
    server.wait_ready()
    yield server
    assert server.close() == 0, "lokal serve did not stop cleanly on SIGTERM"
