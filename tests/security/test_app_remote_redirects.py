"""A remote endpoint cannot redirect the key or the conversation elsewhere (issue #27, "Remote endpoints").

Two loopback servers on two ports, so two origins: the endpoint answers every request with a redirect
(302, and 307, which would resend the POST body: the conversation) to the other, which records all it
is sent. The other never hears from the window; a redirect within the endpoint's own origin is still
followed.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.remote.client import RemoteClient
from app.remote.endpoint_model import Endpoint

KEY = "lokal-test-secret-key"
SECRET_WORDS = "my bank password is hunter2"


class Server:
    """A loopback HTTP server; with `redirect` = (base, status, prefix) it redirects each path under prefix to base + path."""

    def __init__(self):
        self.requests: list[tuple[str, str, str | None, bytes]] = []  # method, path, Authorization, body
        self.redirect: tuple[str, int, str] | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests.append((self.command, self.path, self.headers.get("Authorization"), body))
                if server.redirect is not None and self.path.startswith(server.redirect[2]):
                    base, status, _prefix = server.redirect
                    self.send_response(status)
                    self.send_header("Location", base + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path.endswith("/models"):
                    data = json.dumps({"object": "list", "data": [{"id": "here", "object": "model"}]}).encode()
                    kind = "application/json"
                else:
                    event = {"choices": [{"index": 0, "delta": {"content": "hello"}, "finish_reason": "stop"}]}
                    data = f"data: {json.dumps(event)}\n\ndata: [DONE]\n\n".encode()
                    kind = "text/event-stream"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self):
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def servers():
    endpoint, elsewhere = Server(), Server()
    yield endpoint, elsewhere
    endpoint.close()
    elsewhere.close()


@pytest.mark.parametrize("status", [302, 307])
def test_a_redirect_to_another_origin_carries_neither_the_key_nor_the_conversation(qtbot, servers, status):
    endpoint, elsewhere = servers
    endpoint.redirect = (elsewhere.base, status, "/")
    target = Endpoint("e", "endpoint", endpoint.base + "/v1")
    client = RemoteClient()
    outcomes: list[tuple[str, object]] = []  # whatever the window was told, success or failure
    client.sig_models.connect(lambda _e, ids: outcomes.append(("models", ids)))
    client.sig_models_failed.connect(lambda _e, message: outcomes.append(("models failed", message)))
    client.list_models(target, KEY)
    qtbot.waitUntil(lambda: len(outcomes) == 1, timeout=30_000)
    reply = client.chat(target, KEY, "here", [{"role": "user", "content": SECRET_WORDS}])
    reply.sig_finished.connect(lambda text, _reason, _stats: outcomes.append(("chat", text)))
    reply.sig_failed.connect(lambda message: outcomes.append(("chat failed", message)))
    qtbot.waitUntil(lambda: len(outcomes) == 2, timeout=30_000)

    assert elsewhere.requests == [], "the other origin was sent: " + repr(elsewhere.requests)
    (models, models_said), (chat, chat_said) = outcomes
    assert models == "models failed" and chat == "chat failed"
    for said in (models_said, chat_said):  # where it was sent, and that it did not go
        assert "redirect" in said and elsewhere.base in said and "not followed" in said
    assert [(m, p, a) for m, p, a, _b in endpoint.requests] == [("GET", "/v1/models", f"Bearer {KEY}"), ("POST", "/v1/chat/completions", f"Bearer {KEY}")]
    assert SECRET_WORDS in endpoint.requests[1][3].decode()


def test_a_redirect_within_the_endpoints_own_origin_is_followed(qtbot, servers):
    endpoint, elsewhere = servers
    endpoint.redirect = (endpoint.base + "/v2", 307, "/v1/")  # moved on the same server: /v1/models -> /v2/v1/models
    client = RemoteClient()
    with qtbot.waitSignal(client.sig_models, timeout=30_000) as listed:
        client.list_models(Endpoint("e", "endpoint", endpoint.base + "/v1"), KEY)
    assert listed.args[1] == ["here"]
    assert [(m, p, a) for m, p, a, _b in endpoint.requests] == [("GET", "/v1/models", f"Bearer {KEY}"), ("GET", "/v2/v1/models", f"Bearer {KEY}")]
    assert elsewhere.requests == []
