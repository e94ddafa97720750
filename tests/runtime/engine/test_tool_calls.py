"""Tool calls out of a reply, in each family's format, streamed or whole; and the grammar that forces one."""

from __future__ import annotations

import json

import pytest

from runtime.llama.sampling import Sampler, SamplingConfig
from runtime.engine.tools import HERMES, LLAMA3, MISTRAL, ToolCallParser, call_grammar, split_reply, tool_format
from runtime.protocol import ToolSpec

NAMES = ["get_weather", "get_time"]
REPLIES = [
    (HERMES, 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"city": "Paris"}}\n</tool_call>', "Let me check.", ["get_weather", "get_time"]),
    (HERMES, '```json\n{\n  "name": "get_weather",\n  "arguments": {"city": "Paris"}\n}\n```', "", ["get_weather"]),  # Qwen2.5-Coder's way
    (HERMES, 'To get it, call:\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```', "To get it, call:", ["get_weather"]),
    (HERMES, 'Example:\n```json\n{"a": 1}\n```', 'Example:\n```json\n{"a": 1}\n```', []),
    (HERMES, '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}', "", ["get_weather"]),  # arguments as JSON text
    (HERMES, "```python\nprint('no call')\n```", "```python\nprint('no call')\n```", []),
    (HERMES, '{"name": "not_a_tool", "arguments": {}}', '{"name": "not_a_tool", "arguments": {}}', []),
    (HERMES, "Half a tag <tool_ and no call", "Half a tag <tool_ and no call", []),
    (LLAMA3, '{"name": "get_weather", "parameters": {"city": "Paris; France"}}', "", ["get_weather"]),
    (LLAMA3, '{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {"city": "Paris"}}', "", ["get_weather", "get_time"]),
    (LLAMA3, "It is sunny.", "It is sunny.", []),
    (MISTRAL, '[{"name": "get_weather", "arguments": {"city": "Paris"}}]', "", ["get_weather"]),
    (MISTRAL, '[TOOL_CALLS][{"name": "get_time", "arguments": {"city": "Rome"}}]', "", ["get_time"]),
    (MISTRAL, "[Note] plain text", "[Note] plain text", []),
]


@pytest.mark.parametrize("fmt, reply, text, names", REPLIES)
def test_calls_are_parsed_whole_and_streamed_alike(fmt, reply, text, names):
    whole_text, calls = split_reply(reply, fmt, NAMES)
    assert whole_text == text and [c.name for c in calls] == names
    for call in calls:
        assert isinstance(json.loads(call.arguments), dict) and call.id.startswith("call_")
    parser = ToolCallParser(fmt, NAMES)
    events = [e for ch in reply for e in parser.push(ch)] + parser.finish()
    assert [e.call.name for e in events if e.call] == names
    assert "".join(e.text for e in events).strip() == text.strip()


def test_the_format_comes_from_the_template():
    assert tool_format("{{ '[TOOL_CALLS]' }}{{ tools }}", True) == MISTRAL
    assert tool_format("<|python_tag|>{{ tools }}", True) == LLAMA3
    assert tool_format("<tool_call>{{ tools }}", True) == HERMES
    assert tool_format("[TOOL_CALLS]", False) == HERMES  # a template without tools gets them in the hermes format


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [HERMES, LLAMA3, MISTRAL])
def test_the_forcing_grammar_parses_in_llama_cpp_and_allows_only_calls(starter_model, fmt):
    from runtime.llama.llama_model import LlamaModel, LoadSettings
    from runtime.gguf.reader import read_file_header

    model = LlamaModel(LoadSettings(str(starter_model), 128, 0, "f16", "f16", None, 1), read_file_header(starter_model))
    try:
        tools = [ToolSpec("get_weather", "", {"type": "object", "properties": {"city": {"type": "string", "maxLength": 8}}, "required": ["city"]}), ToolSpec("get_time")]
        sampler = Sampler(SamplingConfig(temperature=0.0, grammar=call_grammar(tools, fmt, only="get_weather")), model)
        opener = {HERMES: "<tool_call>", LLAMA3: "{", MISTRAL: "[TOOL_CALLS]"}[fmt]
        wrong = {HERMES: "Sure", LLAMA3: "Sure", MISTRAL: "Sure"}[fmt]
        assert sampler._fits_grammar(model.tokenize(opener, add_bos=False, special=True)[0])
        assert not sampler._fits_grammar(model.tokenize(wrong, add_bos=False)[0])
        sampler.close()
    finally:
        model.close()
