"""Every kind of bad request gets an OpenAI-style error body with its 4xx status, and the server keeps serving."""

import json

import openai
import pytest

from serve_process import MODEL_NAME

pytestmark = pytest.mark.slow

CHAT = "/v1/chat/completions"
GOOD = {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "temperature": 0.0}


def error_of(reply, status: int) -> dict:
    assert reply.status == status, (reply.status, reply.body[:300])
    assert reply.headers["content-type"].startswith("application/json")
    error = reply.json()["error"]
    assert error["message"] and error["type"]
    return error


@pytest.fixture(autouse=True)
def still_serving(served):
    yield
    # After each bad request, a good one is still answered.
    assert served.http("POST", CHAT, GOOD).status == 200


def test_no_key_is_401(served):
    # (The openai client refuses to send a request without a key, so this one goes raw.)
    error = error_of(served.http("POST", CHAT, GOOD, key=None), 401)
    assert error["code"] == "invalid_api_key"
    error_of(served.http("GET", "/v1/models", key=None), 401)


def test_wrong_key_is_401(served):
    with pytest.raises(openai.AuthenticationError) as err:
        served.openai(key="lokal-not-the-key").chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Hi"}], max_tokens=1)
    assert err.value.status_code == 401 and err.value.body["code"] == "invalid_api_key"
    error_of(served.http("GET", "/v1/models", key=served.key + "x"), 401)
    error_of(served.http("GET", "/v1/models", key=None, headers={"Authorization": served.key}), 401)  # no "Bearer"


def test_malformed_json_is_400(served):
    error = error_of(served.http("POST", CHAT, b'{"model": "x", "messages": [', headers={"Content-Type": "application/json"}), 400)
    assert "not valid JSON" in error["message"] and error["code"] == "invalid_json"
    error_of(served.http("POST", CHAT, b"\xff\xfe not utf-8"), 400)


def test_body_that_is_not_an_object_is_400(served):
    error = error_of(served.http("POST", CHAT, b'["model"]'), 400)
    assert "JSON object" in error["message"]


@pytest.mark.parametrize(
    "change, param",
    [
        ({"messages": "Hi"}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages.0.content"),
        ({"messages": [{"role": "robot", "content": "Hi"}]}, "messages.0.role"),
        ({"max_tokens": "5"}, "max_tokens"),
        ({"max_tokens": -1}, "max_tokens"),
        ({"temperature": "hot"}, "temperature"),
        ({"temperature": 3.0}, "temperature"),
        ({"top_p": 0}, "top_p"),
        ({"seed": 1.5}, "seed"),
        ({"stream": 1}, "stream"),
        ({"stop": [1]}, "stop.0"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"n": 0}, "n"),
        ({"n": 129}, "n"),  # past OpenAI's 128 (the server's own bound: test_choices.py)
        ({"model": 7}, "model"),
        ({"min_p": 2}, "min_p"),
        ({"repeat_penalty": 0}, "repeat_penalty"),
        ({"frequency_penalty": 3}, "frequency_penalty"),
        ({"presence_penalty": "high"}, "presence_penalty"),
        ({"repeat_last_n": -2}, "repeat_last_n"),
        ({"logit_bias": {"not-a-token": 1}}, "logit_bias"),
        ({"logit_bias": {"1": 1000}}, "logit_bias.1"),
        ({"response_format": {"type": "xml"}}, "response_format.type"),
        ({"tool_choice": "sometimes"}, "tool_choice"),
        ({"tools": [{"type": "function", "function": {"name": "has space"}}]}, "tools.0.function.name"),
    ],
)
def test_wrong_field_types_and_values_are_400_naming_the_field(served, change, param):
    error = error_of(served.http("POST", CHAT, {**GOOD, **change}), 400)
    assert error["param"] == param, error


def test_wrong_types_through_the_openai_client_are_400(served):
    with pytest.raises(openai.BadRequestError) as err:
        served.openai().chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Hi"}], max_tokens="many")
    assert err.value.status_code == 400 and err.value.body["param"] == "max_tokens"
    with pytest.raises(openai.BadRequestError) as err:
        served.openai().completions.create(model=MODEL_NAME, prompt=["one", [1, 2]], max_tokens=1)
    assert err.value.body["param"] == "prompt"


def test_missing_model_is_400_and_unknown_model_is_404(served):
    error = error_of(served.http("POST", CHAT, {"messages": GOOD["messages"]}), 400)
    assert error["param"] == "model"
    with pytest.raises(openai.NotFoundError) as err:
        served.openai().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hi"}], max_tokens=1)
    assert err.value.body["code"] == "model_not_found" and MODEL_NAME in err.value.body["message"]
    error_of(served.http("GET", "/v1/models/gpt-4o"), 404)


def test_body_over_the_limit_is_413(served):
    with pytest.raises(openai.APIStatusError) as err:
        served.openai().chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "x" * 70_000}], max_tokens=1)
    assert err.value.status_code == 413
    assert err.value.body["code"] == "request_too_large" and "65536" in err.value.body["message"]


def test_prompt_longer_than_the_context_is_400(served):
    with pytest.raises(openai.BadRequestError) as err:
        served.openai().completions.create(model=MODEL_NAME, prompt="word " * 1500, max_tokens=1)
    assert err.value.body["code"] == "context_length_exceeded"


def test_unsupported_options_are_refused_not_ignored(served):
    error = error_of(served.http("POST", "/v1/completions", {"model": MODEL_NAME, "prompt": "a", "suffix": "b"}), 400)
    assert error["param"] == "suffix"


@pytest.mark.parametrize("field, value", [("foo", 1), ("functions", [{"name": "f"}]), ("thinking", {"type": "enabled"}), ("parallel_tool_calls", False), ("prediction", {"type": "content", "content": "x"})])
def test_a_field_that_would_change_the_reply_is_refused_by_name_not_ignored(served, field, value):
    error = error_of(served.http("POST", CHAT, {**GOOD, field: value}), 400)
    assert error["param"] == field and field in error["message"]


def test_fields_that_cannot_change_the_reply_are_accepted(served):
    reply = served.http("POST", CHAT, {**GOOD, "user": "u1", "store": False, "metadata": {"k": "v"}, "cache_prompt": True, "parallel_tool_calls": True})
    assert reply.status == 200


def test_the_former_ignored_options_now_change_the_reply(served, starter_model):
    import llama_cpp

    client = served.openai()
    ask = lambda **extra: client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Count: one two one two one two"}], max_tokens=8, temperature=0.0, **extra).choices[0].message.content
    plain = ask()
    assert plain != ask(frequency_penalty=2.0, presence_penalty=2.0, extra_body={"repeat_penalty": 3.0})
    # Banning the tokens of the greedy reply moves it elsewhere.
    vocab = llama_cpp.Llama(str(starter_model), vocab_only=True, verbose=False)
    banned = {str(t): -100 for t in vocab.tokenize(plain.encode(), add_bos=False)}
    assert ask(logit_bias=banned) != plain


@pytest.mark.parametrize("seed", [-1, -(2**40), 2**64 + 5, 10**30])
def test_negative_and_huge_seeds_are_mapped_into_range(served, seed):
    body = {"model": MODEL_NAME, "prompt": "Once upon a time", "max_tokens": 6, "temperature": 1.0, "seed": seed}
    first = served.http("POST", "/v1/completions", body)
    assert first.status == 200, first.body[:300]
    assert served.http("POST", "/v1/completions", body).json()["choices"][0]["text"] == first.json()["choices"][0]["text"]
    if seed == -1:  # -1 is 2**64 - 1 taken modulo 2**64
        same = served.http("POST", "/v1/completions", {**body, "seed": 2**64 - 1})
        assert same.json()["choices"][0]["text"] == first.json()["choices"][0]["text"]


@pytest.mark.parametrize("depth", [65, 20_000])  # 20,000: past the JSON parser's own recursion limit
def test_deeply_nested_json_is_400_not_a_500(served, depth):
    body = b'{"model": "x", "metadata": {"a": ' + b"[" * depth + b"]" * depth + b"}}"
    error = error_of(served.http("POST", CHAT, body, headers={"Content-Type": "application/json"}), 400)
    assert "nested more than 64 levels" in error["message"]


def test_health_without_the_key_says_ok_and_nothing_else(served):
    reply = served.http("GET", "/health", key=None)
    assert reply.status == 200 and reply.json() == {"status": "ok"}
    assert served.http("GET", "/health", key="lokal-wrong").json() == {"status": "ok"}
    details = served.http("GET", "/health").json()
    assert details["status"] == "ready" and details["model"] == MODEL_NAME and "queued" in details


@pytest.mark.parametrize(
    "schema, why",
    [
        ({"type": "objekt"}, "not a valid JSON Schema"),
        ({"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}}, "number bounds cannot be enforced"),
        ({"type": "string", "pattern": "[a-z]+"}, "must be anchored"),
        ({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}, "only references inside the schema"),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, "use anyOf"),
    ],
)
def test_an_invalid_or_unenforceable_schema_is_400_saying_why(served, schema, why):
    body = {**GOOD, "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}}
    error = error_of(served.http("POST", CHAT, body), 400)
    assert why in error["message"] and error["param"] == "response_format.json_schema.schema"


@pytest.mark.parametrize(
    "change, param, why",
    [
        ({"response_format": {"type": "json_schema"}}, "response_format.json_schema.schema", "needs its schema"),
        ({"tool_choice": "required"}, "tool_choice", "needs tools"),
        ({"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "g"}}}, "tool_choice", "not one of the tools"),
        ({"grammar": "root ::= ["}, None, "does not parse"),
    ],
)
def test_constraints_that_cannot_run_are_400_saying_why(served, change, param, why):
    error = error_of(served.http("POST", CHAT, {**GOOD, **change}), 400)
    assert why in error["message"] and error["param"] == param


def test_unknown_endpoint_is_404_and_wrong_method_is_405(served):
    error_of(served.http("POST", "/v1/audio/speech", {"model": MODEL_NAME, "input": "x"}), 404)
    error_of(served.http("GET", CHAT), 405)


def test_cors_headers_only_for_the_allowed_origin(served):
    allowed = served.http("GET", "/v1/models", headers={"Origin": "http://allowed.example"})
    assert allowed.headers["access-control-allow-origin"] == "http://allowed.example"
    other = served.http("GET", "/v1/models", headers={"Origin": "http://evil.example"})
    assert other.status == 200 and "access-control-allow-origin" not in other.headers
    preflight = served.http("OPTIONS", CHAT, key=None, headers={"Origin": "http://allowed.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status == 204 and "Authorization" in preflight.headers["access-control-allow-headers"]
    refused = served.http("OPTIONS", CHAT, key=None, headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in refused.headers


def test_key_file_is_private(served):
    assert served.key_file.stat().st_mode & 0o777 == 0o600
    assert served.key.startswith("lokal-") and len(served.key) > 30
