"""The protocol module alone: validation of typed messages and framing."""

import dataclasses
import json

import pytest

from runtime import protocol
from runtime.protocol import ChatGenerateParams, ErrorCode, ModelLoadParams, RpcError


def test_decode_builds_nested_dataclasses():
    params = protocol.decode(ChatGenerateParams, {"conversation_id": "c", "messages": [{"role": "user", "content": "hi"}], "temperature": 0})
    assert params.messages[0].content == "hi"
    assert params.temperature == 0.0 and isinstance(params.temperature, float)
    assert params.max_tokens is None  # until the model stops, within the context (#30)


def test_messages_of_protocol_1_5_decode_with_the_reasoning_fields_defaulted():
    """A client or a runtime of 1.5 sends no reasoning fields: its messages mean what they meant (#30)."""
    params = protocol.decode(ChatGenerateParams, {"conversation_id": "c", "messages": [{"role": "assistant", "content": "x"}], "max_tokens": 512})
    assert (params.max_tokens, params.reasoning_format, params.reasoning_effort, params.enable_thinking, params.reasoning_budget, params.continue_reply) == (512, "auto", None, None, None, False)
    assert params.messages[0].reasoning == ""
    delta = protocol.decode(protocol.ChatDelta, {"request_id": 1, "conversation_id": "c", "text": "hi"})
    assert (delta.text, delta.reasoning) == ("hi", "")
    result = protocol.decode(protocol.ChatGenerateResult, {"request_id": 1, "conversation_id": "c", "text": "a", "finish_reason": "length", "stats": {"completion_tokens": 3}})
    assert result.reasoning == "" and result.stats.reasoning_tokens == 0 and result.stats.answer_tokens == 0 and result.stats.context_full is False


def test_the_reasoning_fields_round_trip():
    params = ChatGenerateParams("c", [protocol.ChatMessage("assistant", "answer", reasoning="thought")], reasoning_format="deepseek", reasoning_effort="high", enable_thinking=False, reasoning_budget=16, continue_reply=True)
    assert protocol.decode(ChatGenerateParams, protocol.encode(params)) == params
    stats = protocol.GenerationStats(reasoning_tokens=5, answer_tokens=2, thinking_ms=12.5, ttfat_ms=40.0, context_full=True)
    assert protocol.decode(protocol.GenerationStats, protocol.encode(stats)) == stats


@pytest.mark.parametrize(
    "params, field",
    [
        ({"conversation_id": "c", "messages": [{"role": "user", "content": "hi"}], "max_tokens": "ten"}, "params.max_tokens"),
        ({"conversation_id": "c", "messages": [{"role": "user", "content": "hi"}], "max_tokens": True}, "params.max_tokens"),
        ({"conversation_id": "c", "messages": [{"role": "user", "content": "hi"}], "reasoning_format": "harmony"}, "params.reasoning_format"),
        ({"conversation_id": "c", "messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "max"}, "params.reasoning_effort"),
        ({"conversation_id": "c", "messages": [{"role": "user", "content": "hi"}], "enable_thinking": "yes"}, "params.enable_thinking"),
        ({"conversation_id": "c", "messages": [{"role": "user", "content": "hi"}], "reasoning_budget": 1.5}, "params.reasoning_budget"),
        ({"conversation_id": "c", "messages": [{"role": "assistant", "content": "hi", "reasoning": 3}]}, "params.messages[0].reasoning"),
        ({"conversation_id": "c", "messages": [{"role": "robot", "content": "hi"}]}, "params.messages[0].role"),
        ({"conversation_id": "c", "messages": "hi"}, "params.messages"),
        ({"conversation_id": 5, "messages": []}, "params.conversation_id"),
        ({"messages": []}, "params.conversation_id"),
        ({"conversation_id": "c", "messages": [], "tempreature": 1}, "tempreature"),
    ],
)
def test_decode_names_the_bad_field(params, field):
    with pytest.raises(RpcError) as info:
        protocol.decode(ChatGenerateParams, params)
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert field in info.value.message


def test_optional_and_literal_fields():
    p = protocol.decode(ModelLoadParams, {"path": "/x", "flash_attn": None, "type_k": "q8_0"})
    assert p.flash_attn is None and p.type_k == "q8_0"
    with pytest.raises(RpcError):
        protocol.decode(ModelLoadParams, {"path": "/x", "type_k": "q3"})


@pytest.mark.parametrize("line, code", [(b"{nope", ErrorCode.PARSE_ERROR), (b"[1,2]", ErrorCode.INVALID_REQUEST), (b'{"jsonrpc":"1.0","id":1,"method":"x"}', ErrorCode.INVALID_REQUEST), (b'{"jsonrpc":"2.0","id":1,"method":7}', ErrorCode.INVALID_REQUEST), (b"\xff\xfe", ErrorCode.PARSE_ERROR)])
def test_parse_line_rejects(line, code):
    with pytest.raises(RpcError) as info:
        protocol.parse_line(line)
    assert info.value.code == code


def test_lines_are_single_json_objects_with_raw_unicode():
    line = protocol.notification_line("chat.delta", protocol.ChatDelta(1, "c", "héllo\nwörld 日本"))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    message = json.loads(line)
    assert message["params"]["text"] == "héllo\nwörld 日本"
    assert isinstance(protocol.parse_line(line), protocol.Notification)


def test_every_method_has_typed_params_and_result():
    for name, method in protocol.METHODS.items():
        assert dataclasses.is_dataclass(method.params), name
        assert dataclasses.is_dataclass(method.result), name
