"""Issue #27, CORS and DNS rebinding: an allowed origin gets its CORS headers on streamed replies too,
and a loopback server answers only requests that name it by a loopback name and its port.
"""

from __future__ import annotations

import http.client
import json

import pytest

from serve_process import MODEL_NAME, serving

pytestmark = pytest.mark.slow

CHAT = "/v1/chat/completions"
ALLOWED = "http://allowed.example"
GOOD = {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "temperature": 0.0}


@pytest.fixture(scope="module")
def cors_server(starter_model):
    with serving(starter_model, "--parallel", "1", "--max-queue", "2", "--cors", ALLOWED) as server:
        yield server


@pytest.fixture(autouse=True)
def still_serving_after(cors_server):
    yield
    assert cors_server.http("POST", CHAT, GOOD).status == 200


def stream_headers(server, origin: str) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    try:
        body = json.dumps({**GOOD, "max_tokens": 4, "stream": True}).encode()
        connection.request("POST", CHAT, body=body, headers={"Authorization": f"Bearer {server.key}", "Content-Type": "application/json", "Origin": origin})
        response = connection.getresponse()
        headers = {k.lower(): v for k, v in response.getheaders()}
        assert response.status == 200 and headers["content-type"].startswith("text/event-stream")
        assert b"data: [DONE]" in response.read()
        return headers
    finally:
        connection.close()


def test_api_a_streamed_reply_carries_the_cors_headers_for_an_allowed_origin(cors_server):
    headers = stream_headers(cors_server, ALLOWED)
    assert headers["access-control-allow-origin"] == ALLOWED and headers["vary"] == "Origin"
    assert "access-control-allow-origin" not in stream_headers(cors_server, "http://evil.example")


def test_api_plain_replies_and_preflights_still_carry_them(cors_server):
    assert cors_server.http("GET", "/v1/models", headers={"Origin": ALLOWED}).headers["access-control-allow-origin"] == ALLOWED
    preflight = cors_server.http("OPTIONS", CHAT, key=None, headers={"Origin": ALLOWED, "Access-Control-Request-Method": "POST"})
    assert preflight.status == 204 and preflight.headers["access-control-allow-origin"] == ALLOWED


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1.nip.io:{port}", "localhost.evil.example:{port}", "127.0.0.1:{other}", "localhost:not-a-port"])
def test_api_a_host_that_is_not_loopback_is_421(cors_server, host):
    host = host.format(port=cors_server.port, other=cors_server.port + 1)
    for method, path, body in (("POST", CHAT, GOOD), ("GET", "/v1/models", None), ("GET", "/health", None)):
        reply = cors_server.http(method, path, body, headers={"Host": host})
        assert reply.status == 421, (host, path, reply.status)
        error = reply.json()["error"]
        assert error["param"] == "Host" and error["code"] == "misdirected_request"


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "LocalHost:{port}", "localhost"])
def test_api_loopback_names_are_answered(cors_server, host):
    assert cors_server.http("POST", CHAT, GOOD, headers={"Host": host.format(port=cors_server.port)}).status == 200
