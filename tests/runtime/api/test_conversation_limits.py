"""A crafted request of very many tiny messages (4 MiB of JSON holds 100,000): answered within seconds at
the limit, a 400 naming the limit above it, and the server keeps serving (issue #13)."""

import pytest

from serve_process import MODEL_NAME, serving

pytestmark = pytest.mark.slow

CHAT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def served(starter_model):
    """`lokal serve` with the default body limit (4 MiB), which lets 100,000 tiny messages through."""
    with serving(starter_model) as server:
        yield server


def tiny_messages(n):
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": "hi"} for i in range(n - 1)] + [{"role": "user", "content": "Say hello."}]


def test_a_hundred_thousand_tiny_messages_are_answered(served):
    reply = served.http("POST", CHAT, {"model": MODEL_NAME, "messages": tiny_messages(100_000), "max_tokens": 1}, timeout=60)
    assert reply.status == 200, reply.body[:300]
    assert reply.json()["usage"]["prompt_tokens"] <= 1024


def test_more_messages_than_the_limit_are_a_400_naming_it(served):
    from runtime.engine.context_window import MAX_MESSAGES

    reply = served.http("POST", CHAT, {"model": MODEL_NAME, "messages": tiny_messages(MAX_MESSAGES + 1), "max_tokens": 1}, timeout=60)
    assert reply.status == 400, reply.body[:300]
    error = reply.json()["error"]
    assert "messages" in error["message"] and f"{MAX_MESSAGES}" in error["message"], error
    assert served.http("POST", CHAT, {"model": MODEL_NAME, "messages": tiny_messages(2), "max_tokens": 1}).status == 200
