"""Issue #27, error text: an internal error's message (file paths, this machine's details) stays in the log.

The client gets a generic 500 with an id, and the log line carries the same id. A real runtime
has no fault to order on cue, so the engine behind the API here is a stand-in that fails the way
the runtime reports its own faults (runtime.server.internal_error over a real OSError). The API
around it is the real one: its listener, thread, event loop and loopback port.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import threading

import pytest

from runtime.api.service import Listener
from runtime.protocol import ApiStartParams, ModelLoadResult
from runtime.server import internal_error

MODEL = "stand-in"
SECRET_DIR = "/home/alice/private-models"


class FailingEngine:
    """EngineJobs whose every reply fails inside the runtime (or, for one prompt, before the runtime even starts it)."""

    def __init__(self) -> None:
        self.model = ModelLoadResult("id", MODEL, "llama", 1, 1, "Q4_0", 1024, 1, True, f"{SECRET_DIR}/{MODEL}.gguf", 0, "f16", "f16", 1.0)

    def served_model(self) -> ModelLoadResult:
        return self.model

    def model_loading(self) -> bool:
        return False

    def expect_reply(self):
        return lambda: None

    def start_generation(self, params, on_text, finish, arrived=None):
        prompt = params.messages[-1].content if params.messages else params.prompt
        if prompt == "fail before it starts":
            raise PermissionError(13, "Permission denied", f"{SECRET_DIR}/kv/state.kvs")
        try:
            open(f"{SECRET_DIR}/missing.gguf", "rb")
        except OSError as exc:
            error = internal_error(exc)

        def run():
            if prompt == "fail midway":
                on_text("Hello")
            finish(None, error)

        threading.Thread(target=run, daemon=True).start()
        return object()

    def cancel_job(self, job) -> None:
        pass


@pytest.fixture
def failing_api(tmp_path):
    listener = Listener(FailingEngine(), ApiStartParams(port=0), "lokal-test-key", tmp_path / "key")
    listener.start()
    yield listener
    listener.stop()


def post(listener, body: dict) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", listener.port, timeout=30)
    try:
        connection.request("POST", "/v1/chat/completions", body=json.dumps(body).encode(), headers={"Authorization": "Bearer lokal-test-key", "Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def ask(prompt: str, stream: bool = False) -> dict:
    return {"model": MODEL, "messages": [{"role": "user", "content": prompt}], "stream": stream}


def incident_of(message: str) -> str:
    match = re.search(r"internal error ([0-9a-f]{12})", message)
    assert match, message
    return match.group(1)


def logged(caplog, incident: str) -> str:
    lines = [r.getMessage() + (r.exc_text or "") for r in caplog.records if r.name == "lokal.api" and incident in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in caplog.records]
    return lines[0]


@pytest.mark.parametrize("prompt", ["fail in the runtime", "fail before it starts"])
def test_api_internal_error_gives_an_id_and_keeps_the_details_in_the_log(failing_api, caplog, prompt):
    caplog.set_level(logging.ERROR, logger="lokal.api")
    status, body = post(failing_api, ask(prompt))
    assert status == 500
    error = json.loads(body)["error"]
    assert SECRET_DIR not in body.decode() and error["type"] == "server_error"
    assert SECRET_DIR in logged(caplog, incident_of(error["message"]))
    # The API keeps serving.
    assert post(failing_api, {"model": MODEL})[0] == 400


def test_api_internal_error_midway_through_a_stream_gives_an_id_too(failing_api, caplog):
    caplog.set_level(logging.ERROR, logger="lokal.api")
    status, body = post(failing_api, ask("fail midway", stream=True))
    assert status == 200 and b"Hello" in body and SECRET_DIR.encode() not in body
    events = [json.loads(line[6:]) for line in body.split(b"\n\n") if line.startswith(b"data: {")]
    error = next(e["error"] for e in events if "error" in e)
    assert SECRET_DIR in logged(caplog, incident_of(error["message"]))
