"""Fuzzing the two doors untrusted bytes come through: the runtime protocol and the API's request bodies.

Whatever arrives, the outcome is a typed error (RpcError, ApiError) or a decoded message: never
another exception, never a hang. Each test is bounded to a few seconds.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from runtime import protocol
from runtime.api import schema
from runtime.api.errors import ApiError
from runtime.api.http import decode_body
from runtime.protocol import RpcError

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None)


def json_values(finite: bool = False):
    scalars = hs.none() | hs.booleans() | hs.integers(min_value=-(2**70), max_value=2**70) | hs.floats(allow_nan=not finite, allow_infinity=not finite) | hs.text(max_size=20)
    return hs.recursive(scalars, lambda inner: hs.lists(inner, max_size=4) | hs.dictionaries(hs.text(max_size=12), inner, max_size=5), max_leaves=25)


field_names = hs.sampled_from(sorted({f for spec in protocol.METHODS.values() for f in spec.params.__dataclass_fields__}) + ["id", "x"])


def param_objects(finite: bool = False):
    """Objects shaped like the real parameters (known field names, any values): they reach deeper than random keys."""
    return hs.dictionaries(field_names, json_values(finite), max_size=6)


@FUZZ
@given(hs.binary(max_size=200) | hs.text(max_size=200).map(str.encode))
def test_any_line_parses_to_a_message_or_a_typed_error(line):
    try:
        message = protocol.parse_line(line)
    except RpcError:
        return
    assert isinstance(message, (protocol.Request, protocol.Notification, protocol.Response))


@FUZZ
@given(hs.sampled_from(sorted(protocol.METHODS)), json_values() | param_objects())
def test_any_params_decode_to_the_method_type_or_invalid_params(method, params):
    spec = protocol.METHODS[method]
    try:
        decoded = protocol.decode(spec.params, params)
    except RpcError as exc:
        assert exc.code == protocol.ErrorCode.INVALID_PARAMS and exc.message.startswith("params")
        return
    assert isinstance(decoded, spec.params)


def test_numbers_that_json_cannot_carry_are_invalid_params():
    for bad in (float("nan"), float("inf"), float("-inf")):
        try:
            protocol.decode(protocol.ChatGenerateParams, {"conversation_id": "c", "messages": [], "temperature": bad})
        except RpcError as exc:
            assert exc.code == protocol.ErrorCode.INVALID_PARAMS and "temperature" in exc.message and "finite" in exc.message
        else:
            raise AssertionError(f"temperature {bad} was accepted")


@FUZZ
@given(hs.sampled_from(sorted(protocol.METHODS)), param_objects(finite=True))
def test_any_request_line_round_trips_through_framing(method, params):
    line = protocol.request_line(7, method, params)
    message = protocol.parse_line(line)
    assert isinstance(message, protocol.Request) and message.method == method and message.params == params


chat_bodies = hs.fixed_dictionaries(
    {"model": json_values(), "messages": json_values()},
    optional={name: json_values() for name in ("max_tokens", "temperature", "top_p", "top_k", "seed", "stop", "stream", "stream_options", "n", "logprobs", "response_format", "tools", "tool_choice")},
)


@FUZZ
@given(hs.sampled_from([schema.ChatCompletionRequest, schema.CompletionRequest]), hs.binary(max_size=300) | json_values().map(lambda v: json.dumps(v).encode()) | chat_bodies.map(lambda v: json.dumps(v).encode()))
def test_any_request_body_is_a_valid_request_or_a_400(kind, raw):
    try:
        body = schema.parse(kind, decode_body(raw))
    except ApiError as exc:
        assert exc.status == 400
        return
    assert isinstance(body, kind)


@settings(FUZZ, max_examples=12)
@given(hs.sampled_from([10, 100, 1_000, 10_000, 100_000]), hs.sampled_from(["[", '{"a":']))
def test_deeply_nested_bodies_are_a_400_not_a_crash(depth, opener):
    raw = (opener * depth).encode() + b"1" + (b"]" if opener == "[" else b"}") * depth
    try:
        schema.parse(schema.ChatCompletionRequest, decode_body(raw))
    except ApiError as exc:
        assert exc.status == 400


@settings(FUZZ, max_examples=12)
@given(hs.sampled_from([10, 100, 1_000, 10_000, 100_000]), hs.sampled_from(["[", '{"a":']))
def test_deeply_nested_lines_are_a_parse_error_not_a_crash(depth, opener):
    params = (opener * depth) + "1" + ("]" if opener == "[" else "}") * depth
    line = '{"jsonrpc":"2.0","id":1,"method":"chat.generate","params":{"conversation_id":"c","messages":' + params + "}}"
    try:
        request = protocol.parse_line(line.encode())
    except RpcError as exc:
        assert exc.code == protocol.ErrorCode.PARSE_ERROR
        return
    try:
        protocol.decode(protocol.ChatGenerateParams, request.params)
    except RpcError as exc:
        assert exc.code == protocol.ErrorCode.INVALID_PARAMS
