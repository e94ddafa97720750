"""A crafted request of very many tiny messages (4 MiB of JSON holds 100,000): at the API's limit it is
answered, above it a 400 names the limit and the count before anything else is done with the messages, and
the server keeps serving (issues #13, #33)."""

import json

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


def test_as_many_messages_as_the_limit_are_answered(served):
    from runtime.api.http import MAX_MESSAGES

    reply = served.http("POST", CHAT, {"model": MODEL_NAME, "messages": tiny_messages(MAX_MESSAGES), "max_tokens": 1}, timeout=60)
    assert reply.status == 200, reply.body[:300]
    assert reply.json()["usage"]["prompt_tokens"] <= 1024


@pytest.mark.parametrize("n", ["over", 50_000, 100_000])
def test_more_messages_than_the_limit_are_a_400_naming_it_and_the_count(served, n):
    from runtime.api.http import MAX_MESSAGES

    n = MAX_MESSAGES + 1 if n == "over" else n
    reply = served.http("POST", CHAT, {"model": MODEL_NAME, "messages": tiny_messages(n), "max_tokens": 1}, timeout=60)
    assert reply.status == 400, reply.body[:300]
    error = reply.json()["error"]
    assert error["param"] == "messages" and error["code"] == "too_many_messages", error
    assert f"{n} messages" in error["message"] and f"at most {MAX_MESSAGES}" in error["message"], error
    assert served.http("POST", CHAT, {"model": MODEL_NAME, "messages": tiny_messages(2), "max_tokens": 1}).status == 200


def test_the_count_is_checked_before_the_messages_themselves(served):
    """50,000 messages of which one is malformed: the answer is about their number (nothing validated one by one)."""
    messages = tiny_messages(50_000)
    messages[10] = {"role": "robot", "content": 3}
    reply = served.http("POST", CHAT, json.dumps({"model": MODEL_NAME, "messages": messages}).encode(), headers={"Content-Type": "application/json"})
    assert reply.status == 400 and reply.json()["error"]["code"] == "too_many_messages", reply.body[:300]
