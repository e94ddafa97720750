"""Issue #27, one API request cannot exhaust memory or crash the runtime: bounded history windows,
raw grammars checked before llama.cpp's parser sees them, logit_bias keys that int() would refuse.

Each bad request gets a 400 (INVALID_PARAMS on the runtime protocol) naming the field and the
limit, and the process keeps serving: after every test a plain request is still answered.
"""

from __future__ import annotations

import http.client
import json
import threading

import pytest

from bad_input import expect_error
from serve_process import MODEL_NAME, serving
from runtime.llama.sampling import INT32_SETTINGS, Sampler, SamplerError, SamplingConfig
from runtime.protocol import ErrorCode

pytestmark = pytest.mark.slow

CHAT = "/v1/chat/completions"
N_CTX = 1024  # serve_process's default context
GOOD = {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "temperature": 0.0}
GENERATE = {"conversation_id": "bounds", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "temperature": 0.0}


@pytest.fixture(scope="module")
def bounds_server(starter_model):
    """`lokal serve` with its default body limit (4 MiB: room for a large schema), one reply at a time."""
    with serving(starter_model, "--parallel", "1", "--max-queue", "2") as server:
        yield server


@pytest.fixture(autouse=True)
def still_serving_after(request):
    yield
    if "bounds_server" in request.fixturenames:
        server = request.getfixturevalue("bounds_server")
        assert server.http("POST", CHAT, GOOD).status == 200
        assert server.restarts == 0


def error_of(reply, status: int) -> dict:
    assert reply.status == status, (reply.status, reply.body[:300])
    return reply.json()["error"]


# ---- history windows ---------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["repeat_last_n", "dry_penalty_last_n"])
@pytest.mark.parametrize("value", [N_CTX + 1, 2**31 - 1, 2**32 + 64, 2**70])
def test_api_history_window_wider_than_the_context_is_400_naming_the_field(bounds_server, field, value):
    body = {**GOOD, field: value, "repeat_penalty": 1.3, "dry_multiplier": 0.8}
    error = error_of(bounds_server.http("POST", CHAT, body), 400)
    assert error["param"] == field and str(N_CTX) in error["message"], error


@pytest.mark.parametrize("field", ["repeat_last_n", "dry_penalty_last_n"])
def test_api_history_window_of_the_whole_context_is_still_answered(bounds_server, field):
    for value in (-1, N_CTX):
        assert bounds_server.http("POST", CHAT, {**GOOD, field: value, "repeat_penalty": 1.3, "dry_multiplier": 0.8}).status == 200


@pytest.mark.parametrize("field", ["top_k", "dry_allowed_length"])
def test_api_counts_past_32_bits_are_400_not_truncated(bounds_server, field):
    error = error_of(bounds_server.http("POST", CHAT, {**GOOD, field: 2**32 + 5}), 400)
    assert error["param"] == field


@pytest.mark.parametrize("name", INT32_SETTINGS)
def test_sampler_refuses_a_count_past_32_bits_before_any_ctypes_call(name):
    # The last line of defence, for callers that skip the engine's checks: ctypes would keep only the low 32 bits.
    with pytest.raises(SamplerError, match=name):
        Sampler(SamplingConfig(**{name: 2**32 + 5}))


@pytest.mark.parametrize("name", ["penalty_last_n", "dry_penalty_last_n"])
@pytest.mark.parametrize("value", [2049, 2**31 - 1, 2**32 + 64])
def test_protocol_history_window_wider_than_the_context_is_invalid_params(loaded_runtime, name, value):
    # loaded_runtime has a 2048-token context.
    expect_error(loaded_runtime, "chat.generate", {**GENERATE, name: value, "repeat_penalty": 1.3, "dry_multiplier": 0.8}, ErrorCode.INVALID_PARAMS, f"params.{name}")


def test_protocol_top_k_past_32_bits_is_invalid_params(loaded_runtime):
    expect_error(loaded_runtime, "chat.generate", {**GENERATE, "top_k": 2**32 + 5}, ErrorCode.INVALID_PARAMS, "params.top_k")


# ---- logit_bias keys ---------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["²", "--5", "١", "9" * 5000, "+5", " 5", "5.0"])
def test_api_logit_bias_key_that_is_not_a_plain_number_is_400(bounds_server, key):
    # "²" and "١" pass str.isdigit(); int() refuses the first, reads the second as 1, and refuses 5000 digits.
    error = error_of(bounds_server.http("POST", CHAT, {**GOOD, "logit_bias": {key: 1}}), 400)
    assert error["param"] == "logit_bias" and "token ids" in error["message"], error


# ---- raw grammars ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "grammar, limit",
    [
        ("root ::= " + "(" * 60_000 + '"a"' + ")" * 60_000, "nested more than 256"),
        ('root ::= "a"{5,2}', "upper bound below its lower one"),
        ('root ::= "a"{0,4294967296}', "goes past 2000"),
        ('root ::= "a"{' + "9" * 5000 + "}", "goes past 2000"),
        ("root ::= " + " ".join(f'"a"{{0,2000}}' for _ in range(60)), "more than 100000 copies"),
    ],
    ids=["deep-nesting", "inverted", "huge-bound", "5000-digit-bound", "many-ranges"],
)
def test_api_grammar_past_the_parser_limits_is_400_naming_the_limit(bounds_server, grammar, limit):
    error = error_of(bounds_server.http("POST", CHAT, {**GOOD, "grammar": grammar}), 400)
    assert error["param"] == "grammar" and limit in error["message"], error


def test_api_grammar_limits_ignore_what_strings_and_classes_hold(bounds_server):
    # Parentheses and braces inside a string literal, a character class or a comment are not syntax.
    grammar = 'root ::= "(((({9,1}" [(){}] # ((((({5,2}\n'
    assert bounds_server.http("POST", CHAT, {**GOOD, "grammar": grammar, "max_tokens": 2}).status == 200


def test_api_schema_whose_grammar_would_be_too_large_is_400(bounds_server):
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 10**9}}}
    body = {**GOOD, "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}}
    error = error_of(bounds_server.http("POST", CHAT, body), 400)
    assert error["param"] == "response_format.json_schema.schema" and "2000" in error["message"], error


def test_protocol_grammar_past_the_parser_limits_is_invalid_params(loaded_runtime):
    expect_error(loaded_runtime, "chat.generate", {**GENERATE, "grammar": "root ::= " + "(" * 60_000 + '"a"' + ")" * 60_000}, ErrorCode.INVALID_PARAMS, "params.grammar: groups are nested more than 256")
    expect_error(loaded_runtime, "chat.generate", {**GENERATE, "grammar": 'root ::= "a"{5,2}'}, ErrorCode.INVALID_PARAMS, "params.grammar")
    expect_error(loaded_runtime, "chat.generate", {**GENERATE, "json_schema": {"type": "array", "maxItems": 10**12}}, ErrorCode.INVALID_PARAMS, "params.json_schema")


# ---- a slow schema does not stall other streams ------------------------------------------------------
SLOW_PROPERTIES = 600  # seconds of conversion on a busy machine (about 4 ms a property)


def slow_schema() -> dict:
    """A schema that takes the converter seconds and is refused only by the grammar it makes (a 400 right after)."""
    item = {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "array", "items": {"type": "integer"}}}, "required": ["x", "y"]}
    properties = {f"field_{i}": item for i in range(SLOW_PROPERTIES)}
    properties["last"] = {"type": "string", "maxLength": 300}  # 300 nested groups: past the nesting limit
    return {"type": "object", "properties": properties, "required": list(properties)}


def sse_lines(server, path: str, body: dict):
    """The data lines of a streamed reply, each as soon as it arrives."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        connection.request("POST", path, body=json.dumps(body).encode(), headers={"Authorization": f"Bearer {server.key}", "Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.status == 200, response.read()[:300]
        while line := response.readline():
            if line.startswith(b"data: "):
                yield line[6:].strip()
    finally:
        connection.close()


def test_api_a_slow_schema_conversion_does_not_stall_another_stream(bounds_server, starter_model):
    """Events, in the order the client saw them: a stream's chunks keep arriving between the slow request and its answer."""
    import llama_cpp

    vocab = llama_cpp.Llama(str(starter_model), vocab_only=True, verbose=False)
    never_end = {str(vocab.token_eos()): -100, **{str(t): -100 for t in vocab.tokenize(b"<|im_end|>", add_bos=False, special=True)}}
    events: list[tuple[str, object]] = []
    lock = threading.Lock()
    first_chunk = threading.Event()

    def note(what, value=None):
        with lock:
            events.append((what, value))

    def stream():
        body = {"model": MODEL_NAME, "prompt": "Once upon a time", "max_tokens": 400, "temperature": 0.0, "stream": True, "logit_bias": never_end}
        for line in sse_lines(bounds_server, "/v1/completions", body):
            note("stream", line)
            first_chunk.set()
        note("stream-end")

    streaming = threading.Thread(target=stream, daemon=True)
    streaming.start()
    assert first_chunk.wait(120), "the stream never started"
    slow = {**GOOD, "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": slow_schema()}}}
    note("slow-sent")
    error = error_of(bounds_server.http("POST", CHAT, slow, timeout=300), 400)
    note("slow-answered")
    streaming.join(300)
    assert "nested more than 256" in error["message"], error
    kinds = [kind for kind, _ in events]
    between = kinds[kinds.index("slow-sent") + 1 : kinds.index("slow-answered")]
    # While the schema was converted the stream went on; with the conversion on the event loop, nothing came.
    assert between.count("stream") >= 5, kinds
