"""Renders a conversation to prompt text with the chat template stored in the GGUF file.

The environment is set up as transformers sets up its own (`apply_chat_template`),
so a model's template renders here as it did where it was written: the
`loopcontrols` extension (`{% break %}`, `{% continue %}`), a `{% generation %}`
block rendered as plain content, a `tojson` that does not HTML-escape and takes
`indent`, `separators` and `sort_keys`, and the globals `raise_exception` and
`strftime_now`. Templates that take `tools` get them.

Templates come from downloaded files, so they run in a bounded sandbox
(template_sandbox.py: jinja2's immutable sandbox, every loop iteration counted
across the whole render, every operation that grows a string checked before it
allocates, and the request's cancel flag looked at as it goes), and the rendered
text may not outgrow a limit. A hostile or broken template is refused with a
TemplateError in milliseconds, not run for minutes.
"""

from __future__ import annotations

import datetime
from typing import Any, Mapping, Sequence

import jinja2
from jinja2 import meta, nodes
from jinja2.ext import Extension

from runtime.engine.template_sandbox import (  # noqa: F401 (the errors callers catch are this module's too)
    BoundedEnvironment, RenderCancelled, TemplateError, TemplateTooExpensive, cancelled_by, rendering,
)

# For models whose file carries no template: ChatML, which most small instruct models use.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# The rendered prompt may be this long, or 4x the conversation's text if that is more.
MIN_OUTPUT_CHARS = 1 << 21
OUTPUT_PER_INPUT_CHAR = 4


def _raise_exception(message: str) -> None:
    raise TemplateError(f"the model's chat template refused the conversation: {message}")


def _strftime_now(fmt: str) -> str:
    return datetime.datetime.now().strftime(fmt)


class _GenerationTag(Extension):
    """`{% generation %}...{% endgeneration %}` marks the assistant's part for training; in a prompt it is plain content."""

    tags = {"generation"}

    def parse(self, parser) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _environment() -> BoundedEnvironment:
    env = BoundedEnvironment(trim_blocks=True, lstrip_blocks=True, undefined=jinja2.ChainableUndefined, extensions=["jinja2.ext.loopcontrols", _GenerationTag])
    env.globals.update(raise_exception=_raise_exception, strftime_now=_strftime_now)
    return env


def _text_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_text_size(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_text_size(v) for v in value)
    return 8


class ChatTemplate:
    def __init__(self, source: str | None, bos_token: str = "", eos_token: str = ""):
        self.from_model = bool(source)
        self.source = source or CHATML_TEMPLATE
        env = _environment()
        try:
            parsed = env.parse(self.source)
            self._template = env.from_string(parsed)
        except jinja2.TemplateError as exc:
            raise TemplateError(f"the model's chat template does not parse: {exc}") from None
        # Whether the template renders `tools` itself (Qwen2.5's, Llama 3.1's, ...): the others get them in a system message.
        variables = meta.find_undeclared_variables(parsed)
        self.takes_tools = "tools" in variables
        # The switches a reasoning template reads (Qwen3's, SmolLM3's enable_thinking; gpt-oss's reasoning_effort).
        self.options = frozenset(variables & {"enable_thinking", "reasoning_effort"})
        self.bos_token = bos_token
        self.eos_token = eos_token

    def render(self, messages: Sequence[dict], add_generation_prompt: bool = True, tools: Sequence[dict] | None = None, options: Mapping[str, Any] | None = None) -> str:
        """`options`: template variables such as enable_thinking (chat_template_kwargs); given only to a template that reads them."""
        context = {"messages": list(messages), "add_generation_prompt": add_generation_prompt, "bos_token": self.bos_token, "eos_token": self.eos_token}
        context.update({name: value for name, value in (options or {}).items() if name in self.options and value is not None})
        if tools:
            context["tools"] = list(tools)
        max_output = max(MIN_OUTPUT_CHARS, OUTPUT_PER_INPUT_CHAR * (_text_size(context["messages"]) + _text_size(tools or [])))
        with rendering(max_output) as budget:
            try:
                pieces, size = [], 0
                for piece in self._template.generate(**context):
                    size += len(piece)
                    if size > max_output:
                        raise TemplateTooExpensive(f"the chat template writes more than {max_output:,} characters for this conversation")
                    budget.step(0)  # a cancel lands between pieces too
                    pieces.append(piece)
                return "".join(pieces)
            except (TemplateError, RenderCancelled):
                raise
            except Exception as exc:  # a template is untrusted code: any failure is the template's
                raise TemplateError(f"the model's chat template failed: {type(exc).__name__}: {exc}") from None
