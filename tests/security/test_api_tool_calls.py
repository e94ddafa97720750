"""Issue #27, tool calls the request never declared: a call is only a call if its name is one of the
request's tools and its arguments validate against that tool's parameters. Anything else the model
writes in a call's shape (a name echoed from a web page, say) is plain content, whole or streamed,
in every format (Hermes, Llama 3, Mistral, bare JSON).
"""

from __future__ import annotations

import http.client
import http.server
import json
import threading

import pytest

from serve_process import MODEL_NAME, serving
from runtime.engine.tools import HERMES, LLAMA3, MISTRAL, ToolCallParser, split_reply
from runtime.protocol import ToolSpec

WEATHER = ToolSpec("get_weather", "The weather in a city", {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False})
TOOLS = [WEATHER, ToolSpec("get_time")]  # get_time: no parameters schema, any arguments


def reply_in(fmt: str, name: str, arguments: dict) -> str:
    call = {"name": name, ("parameters" if fmt == LLAMA3 else "arguments"): arguments}
    if fmt == HERMES:
        return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
    if fmt == MISTRAL:
        return f"[TOOL_CALLS][{json.dumps(call)}]"
    return json.dumps(call)


UNDECLARED = [("delete_files", {"path": "/"}), ("get_weather", {"city": 5}), ("get_weather", {}), ("get_weather", {"city": "Paris", "then": "rm -rf"})]


def streamed(fmt: str, reply: str, tools) -> list:
    parser = ToolCallParser(fmt, tools)
    return [event for char in reply for event in parser.push(char)] + parser.finish()


@pytest.mark.parametrize("fmt", [HERMES, LLAMA3, MISTRAL])
@pytest.mark.parametrize("name, arguments", UNDECLARED, ids=["undeclared-name", "wrong-type", "missing-required", "extra-argument"])
def test_api_a_call_the_request_did_not_declare_is_plain_content(fmt, name, arguments):
    reply = reply_in(fmt, name, arguments)
    text, calls = split_reply(reply, fmt, TOOLS)
    assert calls == [] and text == reply
    events = streamed(fmt, reply, TOOLS)
    assert [e for e in events if e.call] == [] and "".join(e.text for e in events) == reply


@pytest.mark.parametrize("fmt", [HERMES, LLAMA3, MISTRAL])
def test_api_a_declared_call_with_valid_arguments_is_still_a_call(fmt):
    for name, arguments in (("get_weather", {"city": "Paris"}), ("get_time", {"anything": [1, 2]})):
        text, calls = split_reply(reply_in(fmt, name, arguments), fmt, TOOLS)
        assert text == "" and [(c.name, json.loads(c.arguments)) for c in calls] == [(name, arguments)]
        assert [e.call.name for e in streamed(fmt, reply_in(fmt, name, arguments), TOOLS) if e.call] == [name]


def test_api_one_undeclared_call_among_declared_ones_leaves_those_calls():
    reply = reply_in(HERMES, "get_weather", {"city": "Paris"}) + "\n" + reply_in(HERMES, "delete_files", {"path": "/"})
    text, calls = split_reply(reply, HERMES, TOOLS)
    assert [c.name for c in calls] == ["get_weather"] and "delete_files" in text


def test_api_a_bare_json_call_is_checked_against_the_schema_too():
    text, calls = split_reply('{"name": "get_weather", "arguments": {"city": 5}}', HERMES, TOOLS)
    assert calls == [] and "get_weather" in text


def test_api_checking_arguments_never_fetches_a_schema_the_request_points_at():
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        remote = ToolSpec("lookup", "", {"type": "object", "properties": {"q": {"$ref": f"http://127.0.0.1:{server.server_port}/q.json"}}})
        text, calls = split_reply(reply_in(HERMES, "lookup", {"q": "x"}), HERMES, [remote])
    finally:
        server.shutdown()
    assert hits == [] and calls == [] and "lookup" in text  # unresolved, so not a call it can vouch for


# ---- through the API, with the real model ---------------------------------------------------------------
CHAT = "/v1/chat/completions"
API_TOOLS = [{"type": "function", "function": {"name": WEATHER.name, "description": WEATHER.description, "parameters": WEATHER.parameters}}]


@pytest.fixture(scope="module")
def tools_server(starter_model):
    with serving(starter_model, "--parallel", "1", "--max-queue", "2") as server:
        yield server


def gbnf_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def forced(reply: str, stream: bool) -> dict:
    """A request whose reply the grammar fixes to `reply` (the starter model writes what it is told), tools declared, tool_choice auto."""
    return {"model": MODEL_NAME, "messages": [{"role": "user", "content": "What is the weather in Paris?"}], "tools": API_TOOLS, "grammar": f"root ::= {gbnf_literal(reply)}", "max_tokens": 80, "temperature": 0.0, "stream": stream}


def streamed_reply(server, body: dict) -> tuple[str, list]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    try:
        connection.request("POST", CHAT, body=json.dumps(body).encode(), headers={"Authorization": f"Bearer {server.key}", "Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.status == 200, response.read()[:300]
        chunks = [json.loads(line[6:]) for line in response.read().split(b"\n\n") if line.startswith(b"data: {")]
    finally:
        connection.close()
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    return "".join(d.get("content") or "" for d in deltas), [call for d in deltas for call in d.get("tool_calls") or []]


@pytest.mark.slow
@pytest.mark.parametrize("name, arguments", UNDECLARED[:2], ids=["undeclared-name", "wrong-type"])
def test_api_server_returns_an_undeclared_call_as_content_whole_and_streamed(tools_server, name, arguments):
    reply = reply_in(HERMES, name, arguments)
    whole = tools_server.http("POST", CHAT, forced(reply, stream=False))
    assert whole.status == 200, whole.body[:300]
    choice = whole.json()["choices"][0]
    assert "tool_calls" not in choice["message"] and choice["message"]["content"] == reply and choice["finish_reason"] == "stop"
    content, calls = streamed_reply(tools_server, forced(reply, stream=True))
    assert calls == [] and content == reply
    # And the server goes on: a declared call is still a call.
    declared = tools_server.http("POST", CHAT, forced(reply_in(HERMES, "get_weather", {"city": "Paris"}), stream=False)).json()["choices"][0]
    assert [c["function"]["name"] for c in declared["message"]["tool_calls"]] == ["get_weather"]
