"""Reasoning through `lokal serve`'s OpenAI API, as llama-server and DeepSeek's API give it: message.reasoning_content,
delta.reasoning_content, usage.completion_tokens_details.reasoning_tokens; reasoning_content, reasoning_effort and
chat_template_kwargs accepted in requests. The starter model thinks because a grammar makes it."""

import json

import pytest

from runtime.scheduler.scheduler import MAX_NEXT_TURN_HEADER
from serve_process import MODEL_NAME, serving

pytestmark = pytest.mark.slow

THINKING = r'''root ::= "<think>" [a-z \n]{8,40} "</think>" "\n"* [A-Za-z ,.]{4,24}'''
CHAT = "/v1/chat/completions"
QUESTION = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Why is the sky blue?"}]
ASK = {"model": MODEL_NAME, "messages": QUESTION, "grammar": THINKING, "temperature": 0.0, "max_tokens": 100}


@pytest.fixture(scope="module")
def served(starter_model):
    with serving(starter_model, "--parallel", "1") as server:
        yield server


def events(body: bytes) -> list[dict]:
    lines = [line[len(b"data: "):] for line in body.split(b"\n") if line.startswith(b"data: ")]
    assert lines[-1] == b"[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_the_reply_carries_reasoning_content_apart_and_the_next_turn_reuses_the_cache(served):
    # A reply longer than what the after-work evaluates unasked: the turn's rewrite is more than a header.
    long_thought = THINKING.replace("{8,40}", "{100,120}").replace("{4,24}", "{20,24}")
    reply = served.http("POST", CHAT, {**ASK, "grammar": long_thought}, timeout=300)
    assert reply.status == 200, reply.body
    body = reply.json()
    message, usage = body["choices"][0]["message"], body["usage"]
    assert message["reasoning_content"] and message["content"], message
    assert "<think>" not in message["content"] and "</think>" not in message["reasoning_content"]
    reasoning_tokens = usage["completion_tokens_details"]["reasoning_tokens"]
    assert 0 < reasoning_tokens < usage["completion_tokens"] and usage["completion_tokens"] > MAX_NEXT_TURN_HEADER

    # The reply goes back with its reasoning apart, with the switches a reasoning client sends (no more 400 for them).
    history = [*QUESTION, {"role": "assistant", "content": message["content"], "reasoning_content": message["reasoning_content"]}, {"role": "user", "content": "And at sunset?"}]
    again = served.http("POST", CHAT, {"model": MODEL_NAME, "messages": history, "max_tokens": 4, "temperature": 0.0, "reasoning_effort": "low", "chat_template_kwargs": {"enable_thinking": False}}, timeout=300)
    assert again.status == 200, again.body
    next_usage = again.json()["usage"]
    cached = next_usage["prompt_tokens_details"]["cached_tokens"]
    print(json.dumps({"first": usage, "next_turn": next_usage}))
    # The turn, as the template writes it back (its answer without the reasoning), came from the cache.
    assert cached >= usage["prompt_tokens"] + usage["completion_tokens"] - reasoning_tokens - 4, (usage, next_usage)
    assert next_usage["prompt_tokens"] - cached <= 12


def test_the_stream_sends_reasoning_and_content_in_their_own_deltas(served):
    whole = served.http("POST", CHAT, ASK, timeout=300).json()["choices"][0]["message"]
    reply = served.http("POST", CHAT, {**ASK, "stream": True, "stream_options": {"include_usage": True}}, timeout=300)
    assert reply.status == 200, reply.body
    chunks = events(reply.body)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    thought = "".join(d.get("reasoning_content", "") for d in deltas)
    answer = "".join(d.get("content") or "" for d in deltas)
    assert (thought, answer) == (whole["reasoning_content"], whole["content"])
    first_answer = next(i for i, d in enumerate(deltas) if d.get("content"))
    assert all(not d.get("reasoning_content") for d in deltas[first_answer:])  # the thinking comes first
    assert chunks[-1]["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0


def test_reasoning_format_none_keeps_the_reply_as_written(served):
    message = served.http("POST", CHAT, {**ASK, "reasoning_format": "none"}, timeout=300).json()["choices"][0]["message"]
    assert message["content"].startswith("<think>") and "reasoning_content" not in message


@pytest.mark.parametrize(
    "extra, param",
    [
        ({"reasoning_format": "harmony"}, "reasoning_format"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"chat_template_kwargs": {"enable_thinking": "yes"}}, "chat_template_kwargs.enable_thinking"),
        ({"chat_template_kwargs": {"thinking_mode": "deep"}}, "chat_template_kwargs.thinking_mode"),
        ({"chat_template_kwargs": "on"}, "chat_template_kwargs"),
        ({"reasoning_budget": -2}, "reasoning_budget"),
        ({"messages": [{"role": "user", "content": "hi", "reasoning_content": "no"}]}, "messages.0.reasoning_content"),
        ({"messages": [{"role": "assistant", "content": "hi", "reasoning_content": 5}]}, "messages.0.reasoning_content"),
    ],
)
def test_bad_reasoning_fields_get_a_400_naming_them(served, extra, param):
    reply = served.http("POST", CHAT, {"model": MODEL_NAME, "messages": QUESTION, "max_tokens": 2, **extra})
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["param"] == param, error
    assert served.http("POST", CHAT, {"model": MODEL_NAME, "messages": QUESTION, "max_tokens": 1}).status == 200  # still serving


def test_reasoning_fields_are_refused_on_raw_completions(served):
    reply = served.http("POST", "/v1/completions", {"model": MODEL_NAME, "prompt": "a", "reasoning_format": "auto"})
    assert reply.status == 400 and reply.json()["error"]["param"] == "reasoning_format"
