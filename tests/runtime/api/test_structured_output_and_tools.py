"""Structured output and tool calls through the `openai` client, against real `lokal serve`s and the starter model.

Each case runs against two servers: one decoding plainly, one speculating (prompt
lookup drafts tokens that the grammar must refuse whenever they do not fit), so a
reply that validates is not an accident of one decoding path.
"""

from __future__ import annotations

import json
import os
from typing import Literal

import jsonschema
import openai
import pydantic
import pytest

from serve_process import MODEL_NAME, Served

pytestmark = pytest.mark.slow


class Street(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=24)
    number: int


class City(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=24)
    country: Literal["France", "Italy", "Spain"]
    population: int
    capital: bool
    streets: list[Street] = pydantic.Field(max_length=2)
    motto: str | None = pydantic.Field(max_length=24)


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 24}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city", "unit"], "additionalProperties": False},
    },
}
TIME = {"type": "function", "function": {"name": "get_time", "description": "The time in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 24}}, "required": ["city"]}}}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture(scope="module")
def speculating(starter_model):
    server = Served("--n-threads", "1", model=str(starter_model), env=dict(os.environ, LOKAL_AUTO_SPECULATION="on"))
    server.wait_ready()
    yield server
    assert server.close() == 0


@pytest.fixture(params=["plain", "speculating"])
def client(request, served, speculating) -> openai.OpenAI:
    return (served if request.param == "plain" else speculating).openai()


@pytest.mark.parametrize("seed", [1, 2])
def test_parse_helper_gets_a_valid_pydantic_object(client, seed):
    reply = client.chat.completions.parse(model=MODEL_NAME, messages=[{"role": "user", "content": "Describe Paris, with two streets."}], response_format=City, max_tokens=200, temperature=0.8, seed=seed)
    choice = reply.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    assert isinstance(choice.message.parsed, City)  # the helper validated it with the model
    jsonschema.validate(json.loads(choice.message.content), City.model_json_schema())


def test_json_object_mode_streams_one_json_object(client):
    stream = client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Reply with a JSON object with one key, name, for a cat."}], response_format={"type": "json_object"}, max_tokens=200, temperature=0.3, seed=4, stream=True)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[-1].choices[0].finish_reason == "stop", text
    assert isinstance(json.loads(text), dict)


def test_required_tool_call_always_parses_and_fits_the_parameters(client):
    reply = client.chat.completions.create(model=MODEL_NAME, messages=ASK, tools=[WEATHER, TIME], tool_choice="required", max_tokens=120, temperature=0.8, seed=5)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    for call in choice.message.tool_calls:
        assert call.type == "function" and call.id.startswith("call_")
        tool = {"get_weather": WEATHER, "get_time": TIME}[call.function.name]
        jsonschema.validate(json.loads(call.function.arguments), tool["function"]["parameters"])


def test_a_named_function_is_the_one_called(client):
    reply = client.chat.completions.create(model=MODEL_NAME, messages=ASK, tools=[WEATHER, TIME], tool_choice={"type": "function", "function": {"name": "get_time"}}, max_tokens=80, temperature=0.0)
    assert [c.function.name for c in reply.choices[0].message.tool_calls][0] == "get_time"


def test_tool_calls_stream_as_openai_streams_them(served):
    client = served.openai()
    whole = client.chat.completions.create(model=MODEL_NAME, messages=ASK, tools=[WEATHER], tool_choice="required", max_tokens=120, temperature=0.0)
    chunks = list(client.chat.completions.create(model=MODEL_NAME, messages=ASK, tools=[WEATHER], tool_choice="required", max_tokens=120, temperature=0.0, stream=True))
    deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
    assert deltas and deltas[0].id.startswith("call_") and deltas[0].function.name == "get_weather"
    arguments = "".join(d.function.arguments or "" for d in deltas if d.index == 0)
    assert json.loads(arguments) == json.loads(whole.choices[0].message.tool_calls[0].function.arguments)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert not "".join(c.choices[0].delta.content or "" for c in chunks if c.choices).strip()  # the call is not also text


def test_the_follow_up_turn_takes_the_call_and_the_tool_result(served):
    client = served.openai()
    first = client.chat.completions.create(model=MODEL_NAME, messages=ASK, tools=[WEATHER], tool_choice="required", max_tokens=120, temperature=0.0)
    call = first.choices[0].message.tool_calls[0]
    history = [*ASK, first.choices[0].message.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"temperature": 21, "sky": "clear"})}]
    second = client.chat.completions.create(model=MODEL_NAME, messages=history, tools=[WEATHER], max_tokens=12, temperature=0.0)
    assert second.choices[0].message.content and second.usage.prompt_tokens > first.usage.prompt_tokens


def test_tool_choice_none_answers_in_text(served):
    reply = served.openai().chat.completions.create(model=MODEL_NAME, messages=ASK, tools=[WEATHER], tool_choice="none", max_tokens=8, temperature=0.0)
    assert reply.choices[0].message.tool_calls is None and reply.choices[0].message.content
