"""Tool calls: tools into the prompt, calls out of the reply, and the grammar that makes a call parse.

Three output formats, those of the curated catalog's families, recognised from
the model's chat template:

    hermes   <tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>   Qwen2.5, Hermes, SmolLM, and
             every template that does not take tools (it gets them in a system message in this format)
    llama3   {"name": ..., "parameters": {...}}                               Llama 3.1 / 3.2 / 3.3
    mistral  [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]             Mistral (the marker is a control
             token, so the reply's text may start at the "[")

Templates that take `tools` render them (and assistant turns with `tool_calls`,
and `tool` messages) themselves. For the others the tools go into the system
message, calls back into assistant text and tool results into user turns, all in
the hermes format. With tool_choice "required" or a named function, the reply is
constrained by a grammar built from the tools' parameter schemas (through the
same converter as structured output), so the call always parses.

A call is only a call if the request declared it: its name is one of the tools
and its arguments validate against that tool's parameters (jsonschema). Anything
else that looks like a call, say a name the model echoed from a web page it was
shown, stays plain text, so an agent that dispatches on the name is never
steered by it. This holds for every format, whole or streamed.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Sequence

import jsonschema
from referencing import Registry

from runtime.engine.structured import SchemaError, schema_grammar
from runtime.protocol import ChatMessage, ToolCall, ToolSpec

HERMES, LLAMA3, MISTRAL = "hermes", "llama3", "mistral"
HERMES_OPEN, HERMES_CLOSE = "<tool_call>", "</tool_call>"
MISTRAL_MARKER = "[TOOL_CALLS]"

HERMES_SYSTEM = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tools}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
    '<tool_call>\n{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>'
)


def tool_format(template_source: str | None, takes_tools: bool) -> str:
    source = template_source or ""
    if takes_tools and MISTRAL_MARKER in source:
        return MISTRAL
    if takes_tools and ("<|python_tag|>" in source or "<|eom_id|>" in source):
        return LLAMA3
    return HERMES


def new_call_id() -> str:
    return "call_" + secrets.token_hex(12)


# ---- into the prompt ---------------------------------------------------------------------------------
def openai_tools(tools: Sequence[ToolSpec]) -> list[dict]:
    """The tools as chat templates expect them (OpenAI's shape)."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters or {"type": "object", "properties": {}}}} for t in tools]


def _arguments(text: str) -> Any:
    # Templates write arguments with tojson: they need the object, not its JSON text.
    try:
        return json.loads(text)
    except ValueError:
        return text


def _add_reasoning(message: dict[str, Any], m: ChatMessage) -> dict[str, Any]:
    """An assistant turn's reasoning, under the names templates read it by (Qwen3: reasoning_content, gpt-oss:
    thinking); a template that reads neither drops it, as most do."""
    if m.reasoning and m.role == "assistant":
        message["reasoning_content"] = message["thinking"] = m.reasoning
    return message


def template_messages(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], takes_tools: bool) -> list[dict]:
    """The conversation as the template's `messages`; for templates without tools, in the hermes format as plain turns."""
    if takes_tools:
        out = []
        for m in messages:
            message: dict[str, Any] = {"role": m.role, "content": m.content}
            _add_reasoning(message, m)
            if m.tool_calls:
                message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _arguments(c.arguments)}} for c in m.tool_calls]
            if m.tool_call_id is not None:
                message["tool_call_id"] = m.tool_call_id
            if m.name is not None:
                message["name"] = m.name
            out.append(message)
        return out
    out = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{m.content}\n</tool_response>"})
        elif m.tool_calls:
            calls = "\n".join(f"{HERMES_OPEN}\n{json.dumps({'name': c.name, 'arguments': _arguments(c.arguments)}, ensure_ascii=False)}\n{HERMES_CLOSE}" for c in m.tool_calls)
            out.append({"role": m.role, "content": (m.content + "\n" if m.content else "") + calls})
        else:
            out.append(_add_reasoning({"role": m.role, "content": m.content}, m))
    if tools:
        listing = HERMES_SYSTEM.format(tools="\n".join(json.dumps(t, ensure_ascii=False) for t in openai_tools(tools)))
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + listing}
        else:
            out.insert(0, {"role": "system", "content": listing})
    return out


# ---- the grammar of a call -----------------------------------------------------------------------------
def call_grammar(tools: Sequence[ToolSpec], fmt: str, only: str | None = None) -> str:
    """GBNF for a reply that is one or more calls of `tools` (or of the one named `only`), in `fmt`."""
    chosen = [t for t in tools if only is None or t.name == only]
    key = "parameters" if fmt == LLAMA3 else "arguments"
    alternatives = [{"type": "object", "properties": {"name": {"const": t.name}, key: _enforceable(t.parameters)}, "required": ["name", key]} for t in chosen]
    call = schema_grammar({"anyOf": alternatives} if len(alternatives) > 1 else alternatives[0])
    call = re.sub(r"^root ::=", "call ::=", call, count=1, flags=re.M)
    if fmt == HERMES:
        root = f'root ::= "{HERMES_OPEN}\\n" call "\\n{HERMES_CLOSE}" ("\\n{HERMES_OPEN}\\n" call "\\n{HERMES_CLOSE}")*'
    elif fmt == MISTRAL:
        root = f'root ::= "{MISTRAL_MARKER}[" call ("," space call)* "]"'
    else:
        root = "root ::= call"
    return call + "\n" + root + "\n"


def _enforceable(parameters: dict) -> dict:
    """The parameters' schema if a grammar can enforce it, else any object: the call must parse either way."""
    schema = parameters or {"type": "object"}
    try:
        schema_grammar(schema)
        return schema
    except SchemaError:
        return {"type": "object"}


# ---- out of the reply ----------------------------------------------------------------------------------
@dataclass
class Event:
    """What a piece of streamed reply turned out to be: text for the user, or a whole call."""

    text: str = ""
    call: ToolCall | None = None


class DeclaredTools:
    """The tools a request declared: which names a call may have, and the schema its arguments must meet.

    A bare name (a str) declares a tool that takes any arguments.
    """

    def __init__(self, tools: Sequence[ToolSpec | str] = ()):
        self._validators: dict[str, Any] = {}
        for tool in tools:
            if isinstance(tool, str):
                self._validators[tool] = None
            else:
                self._validators[tool.name] = _validator(tool.parameters)

    @property
    def names(self) -> set[str]:
        return set(self._validators)

    def __bool__(self) -> bool:
        return bool(self._validators)

    def allow(self, call: ToolCall | None) -> bool:
        if call is None or call.name not in self._validators:
            return False
        validator = self._validators[call.name]
        if validator is None:
            return True
        try:
            return validator.is_valid(json.loads(call.arguments))
        except Exception:  # a reference it cannot resolve, a pattern it cannot compile: not a call it can vouch for
            return False


def _validator(parameters: dict | None) -> Any:
    """A jsonschema validator for a tool's parameters; None (anything goes) when it has none or they are not a schema."""
    if not parameters:
        return None
    try:
        cls = jsonschema.validators.validator_for(parameters)
        cls.check_schema(parameters)
    except Exception:
        return None  # the request's own schema is broken: the name still has to match
    # An empty registry: a "$ref" to a URL is never fetched (jsonschema would, by default), it just does not resolve.
    return cls(parameters, registry=Registry())


class ToolCallParser:
    """Splits a streamed reply into its text and its tool calls, as it streams.

    Text that may be the start of a call is held back until it is clear; a call is
    given out once whole. What looked like a call but does not parse is text after all.

    In the hermes format, models also write a call as a bare JSON object, often in a
    ```json fence, without the tags (Qwen2.5-Coder does; llama.cpp's own parser takes
    these too): a reply that is nothing but such an object, naming one of the tools, is a call.

    `tools`: the declared tools (ToolSpecs, or bare names); a call outside them is text.
    """

    def __init__(self, fmt: str, tools: Sequence[ToolSpec | str] = ()):
        self.fmt = fmt
        self.declared = DeclaredTools(tools)
        self.names = self.declared.names
        self._pending = ""  # held back: maybe (the start of) a call
        self._started = False  # llama3 / mistral: a call can only open the reply
        self._in_call = False
        self._calls = 0
        self._bare: bool | None = None if self.declared else False  # hermes: the reply may be a bare JSON call (None: not known yet)
        self._opener = HERMES_OPEN  # hermes: what opened the call being read

    def push(self, text: str) -> list[Event]:
        self._pending += text
        if self.fmt == HERMES:
            if self._bare is None:
                self._bare = _may_be_bare_call(self._pending)
            return [] if self._bare is not False else self._hermes(final=False)
        return self._leading(final=False)

    def finish(self) -> list[Event]:
        if self.fmt == HERMES:
            if self._bare is not False:
                calls = _parse_bare(self._pending, self.declared)
                if calls:
                    self._pending = ""
                    return [Event(call=c) for c in calls]
            return self._hermes(final=True)
        return self._leading(final=True)

    def _openers(self) -> dict[str, str]:
        # A ```json fence holding a call of one of the tools is a call too (llama.cpp's hermes parser takes it).
        return {HERMES_OPEN: HERMES_CLOSE, FENCE_OPEN: FENCE_CLOSE} if self.names else {HERMES_OPEN: HERMES_CLOSE}

    def _hermes(self, final: bool) -> list[Event]:
        events: list[Event] = []
        openers = self._openers()
        while self._pending:
            if not self._in_call:
                found = [(self._pending.find(o), o) for o in openers if o in self._pending]
                if not found:
                    # Held back: what may start a call, and trailing line breaks (they may only separate two calls).
                    keep = 0 if final else max(_held_back(self._pending, o) for o in openers)
                    text = self._pending[: len(self._pending) - keep]
                    _text(events, "" if final and self._calls and not text.strip() else text)
                    self._pending = self._pending[len(self._pending) - keep :]
                    return events
                start, self._opener = min(found)
                _text(events, self._pending[:start])
                self._pending = self._pending[start:]
                self._in_call = True
            opener, closer = self._opener, openers[self._opener]
            end = self._pending.find(closer, len(opener))
            if end < 0 and not final:
                return events
            # The reply may end inside a call (a stop, the end-of-turn token): then what is there is parsed.
            body = self._pending[len(opener) : end if end >= 0 else len(self._pending)]
            raw = self._pending if end < 0 else self._pending[: end + len(closer)]
            self._pending = "" if end < 0 else self._pending[end + len(closer) :].lstrip("\n")
            self._in_call = False
            calls = ([c] if self.declared.allow(c := _parse_call(body, "arguments")) else None) if opener == HERMES_OPEN else _parse_bare(body, self.declared)
            if calls:
                events += [Event(call=c) for c in calls]
                self._calls += len(calls)
            else:
                events.append(Event(text=raw))
        return events

    def _leading(self, final: bool) -> list[Event]:
        """llama3 / mistral: the reply is either calls from its first character, or text."""
        if self._started and not self._in_call:
            text, self._pending = self._pending, ""
            return [Event(text=text)] if text else []
        stripped = self._pending.lstrip()
        if not self._started:
            if not stripped:
                return []
            opener = "{" if self.fmt == LLAMA3 else "["
            self._started = True
            self._in_call = stripped.startswith(opener) or stripped.startswith(MISTRAL_MARKER) or (not final and MISTRAL_MARKER.startswith(stripped))
            if not self._in_call:
                return self._leading(final)
        if not final:
            return []
        self._in_call = False
        calls = _parse_leading(stripped, self.fmt)
        text, self._pending = self._pending, ""
        if calls is None or not all(self.declared.allow(c) for c in calls):
            return [Event(text=text)]
        return [Event(call=c) for c in calls]


BARE_OPENERS = ("{",)
FENCE_OPEN, FENCE_CLOSE = "```json", "```"


def _may_be_bare_call(text: str) -> bool | None:
    """Whether a reply starting with `text` may be a bare JSON call (None: too early to say)."""
    start = text.lstrip()
    if not start:
        return None
    if start.startswith(BARE_OPENERS):
        return True
    return None if any(opener.startswith(start) for opener in BARE_OPENERS) else False


def _parse_bare(text: str, declared: DeclaredTools) -> list[ToolCall] | None:
    body = text.strip()
    try:
        data = json.loads(body)
    except ValueError:
        return None
    items = data if isinstance(data, list) else [data]
    calls = _every([_call_from(item, "arguments") for item in items])
    return calls if calls and all(declared.allow(c) for c in calls) else None


def _text(events: list[Event], text: str) -> None:
    if text:
        events.append(Event(text=text))


def _held_back(text: str, opener: str) -> int:
    """How much of the end of `text` may still turn out to be line breaks before a call and the call's start."""
    partial = _partial_suffix(text, opener)
    before = text[: len(text) - partial]
    return partial + len(before) - len(before.rstrip("\n"))


def _partial_suffix(text: str, marker: str) -> int:
    """How many characters at the end of `text` could be the start of `marker`."""
    for n in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-n:]):
            return n
    return 0


def _parse_call(body: str, key: str) -> ToolCall | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return _call_from(data, key)


def _call_from(data: Any, key: str) -> ToolCall | None:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    arguments = data.get(key, data.get("arguments", data.get("parameters", {})))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return ToolCall(new_call_id(), data["name"], json.dumps(arguments, ensure_ascii=False))


def _parse_leading(text: str, fmt: str) -> list[ToolCall] | None:
    if fmt == MISTRAL:
        text = text.removeprefix(MISTRAL_MARKER).strip()
        try:
            data = json.loads(text)
        except ValueError:
            return None
        items = data if isinstance(data, list) else [data]
        return _every([_call_from(item, "arguments") for item in items]) or None
    # Llama 3: one call, or several separated by ";" (as its template documents).
    whole = _parse_call(text, "parameters")
    if whole is not None:
        return [whole]
    calls = _every([_parse_call(part.strip(), "parameters") for part in text.split(";")])
    return calls if calls is not None and len(calls) > 1 else None


def _every(calls: list[ToolCall | None]) -> list[ToolCall] | None:
    """The calls, if each one parsed (None if one did not)."""
    parsed = [call for call in calls if call is not None]
    return parsed if len(parsed) == len(calls) else None


def split_reply(text: str, fmt: str, tools: Sequence[ToolSpec | str] = ()) -> tuple[str, list[ToolCall]]:
    """A whole reply's text without its calls (of the declared `tools`), and the calls."""
    parser = ToolCallParser(fmt, tools)
    events = parser.push(text) + parser.finish()
    return "".join(e.text for e in events).strip() if any(e.call for e in events) else "".join(e.text for e in events), [e.call for e in events if e.call]
