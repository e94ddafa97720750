"""A reply the server has taken in is expected by the scheduler until it is submitted or refused.

A wave of prompts starting while nothing streams waits for the replies on their way
(runtime/scheduler/scheduler.py); a lone reply starts at once. The server says a
reply is on its way from the moment it takes the request in, before its job thread
runs; an expectation never released would hold every later wave for GATHER_S.
An API request is expected from its arrival, before its body is read. In-process,
with the real server, engine, scheduler, API and the starter model.
"""

from __future__ import annotations

import io
import json
import socket
import threading

import pytest

from runtime.api.backend import model_name
from runtime.job_slot import Job
from runtime.protocol import ApiStartParams, ChatGenerateParams, ChatMessage, Empty, ModelLoadParams, RpcError
from runtime.server import RuntimeServer
from waiting import wait_until


@pytest.fixture(scope="module")
def server(starter_model):
    server = RuntimeServer(io.BytesIO(), io.BytesIO())
    server.engine.load(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=2, n_threads=1))
    yield server
    server.engine.unload()


def expected(server: RuntimeServer) -> int:
    scheduler = server.engine.scheduler
    assert scheduler is not None, "no model loaded"
    return scheduler.expected


def run(server: RuntimeServer, params: ChatGenerateParams, before_turn: threading.Event | None = None) -> dict:
    """Submit a chat.generate job as the dispatcher does; `before_turn`: its job thread waits there before it runs."""
    job = Job(f"t-{params.conversation_id}", "chat.generate", conversation_id=params.conversation_id)
    outcome: dict = {}
    done = threading.Event()

    def finish(result, error: RpcError | None) -> None:
        outcome.update(result=result, error=error)
        done.set()

    if before_turn is not None:
        real_wait_turn = server.slot.wait_turn

        def held_wait_turn(waiting: Job) -> bool:
            if waiting is job:
                assert before_turn.wait(60), "the test never let the job run"
            return real_wait_turn(waiting)

        server.slot.wait_turn = held_wait_turn  # type: ignore[assignment]
    try:
        server.submit(job, params, None, finish)
        outcome["expected_while_held"] = expected(server)
        if before_turn is not None:
            before_turn.set()
        assert done.wait(120), "the reply never finished"
    finally:
        server.slot.__dict__.pop("wait_turn", None)
    return outcome


def test_a_reply_is_expected_from_the_moment_it_is_taken_in_until_it_is_submitted(server):
    outcome = run(server, ChatGenerateParams("taken-in", [ChatMessage("user", "Say hi.")], max_tokens=2, temperature=0.0), threading.Event())
    assert outcome["error"] is None and outcome["result"].finish_reason in ("length", "stop")
    assert outcome["expected_while_held"] == 1, "the job had not started: the scheduler should have been told it is on its way"
    wait_until(lambda: expected(server) == 0, 30, "the expectation of a submitted reply released")


def test_a_refused_request_leaves_no_expectation_behind(server):
    outcome = run(server, ChatGenerateParams("refused", [], max_tokens=2))
    assert isinstance(outcome["error"], RpcError), outcome
    wait_until(lambda: expected(server) == 0, 30, "the expectation of a refused request released")


@pytest.fixture(scope="module")
def api(server, tmp_path_factory):
    started = server._api_start(ApiStartParams(port=0, key_file=str(tmp_path_factory.mktemp("api") / "key")))
    with open(started.key_file, encoding="utf-8") as f:
        key = f.read().strip()
    yield started.port, key
    server._api_stop(Empty())


def post_in_two_parts(port: int, key: str, body: bytes, between) -> tuple[int, bytes]:
    """POST /v1/chat/completions with the body sent in two parts; `between()` runs after the first."""
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head + body[:10])
        between()
        sock.sendall(body[10:])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer


@pytest.mark.parametrize("body", ["a reply", "bad JSON"])
def test_an_api_request_is_expected_from_its_arrival_before_its_body_is_read(server, api, body):
    # A wave of prompts waits for a request still being read; one that is refused (a bad body) leaves nothing behind.
    port, key = api
    model = model_name(server.served_model().path)
    raw = json.dumps({"model": model, "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 2, "temperature": 0})
    if body == "bad JSON":
        raw = raw[:-1] + ","
    status, answer = post_in_two_parts(port, key, raw.encode(), lambda: wait_until(lambda: expected(server) == 1, 30, "the request expected while its body is read"))
    assert status == (200 if body == "a reply" else 400), answer[-400:]
    wait_until(lambda: expected(server) == 0, 30, "the expectation released once the request was answered")
