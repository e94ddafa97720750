"""Renders a conversation to prompt text with the chat template stored in the GGUF file.

The environment is set up as transformers sets up its own (`apply_chat_template`),
so a model's template renders here as it did where it was written: the
`loopcontrols` extension (`{% break %}`, `{% continue %}`), a `{% generation %}`
block rendered as plain content, a `tojson` that does not HTML-escape and takes
`indent`, `separators` and `sort_keys`, and the globals `raise_exception` and
`strftime_now`. Templates that take `tools` get them.

Templates come from downloaded files, so they run in jinja2's immutable sandbox
(no attribute access to Python internals, no mutation of inputs), and their work is
bounded: `range` counts its iterations across the whole render (nested loops that
write nothing are caught too), string repetition and `%` formatting are checked
before they allocate, and the rendered text may not outgrow a limit. A hostile or
broken template is refused with a TemplateError in milliseconds, not run for minutes.
"""

from __future__ import annotations

import contextvars
import datetime
import json
import operator
import re
from typing import Any, Sequence

import jinja2
from jinja2 import meta, nodes
from jinja2.ext import Extension
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment

# For models whose file carries no template: ChatML, which most small instruct models use.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Work bounds of one render. Real templates iterate over the messages and write each once: far below these.
RANGE_ITERATIONS = 1_000_000  # all `range` loops of one render together (3000 x 3000 nested loops: 9M, 0.5 s)
MIN_OUTPUT_CHARS = 1 << 21  # the rendered prompt may be this long, or 4x the conversation's text if that is more
OUTPUT_PER_INPUT_CHAR = 4


_PRINTF_FIELD = re.compile(r"%[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")


class TemplateError(ValueError):
    pass


class TemplateTooExpensive(TemplateError):
    """The template would do more work than any chat template needs (a loop bomb, an output bomb)."""


class _Budget:
    def __init__(self, max_output: int):
        self.iterations = 0
        self.max_output = max_output


_budget: contextvars.ContextVar[_Budget] = contextvars.ContextVar("chat_template_budget")


def _raise_exception(message: str) -> None:
    raise TemplateError(f"the model's chat template refused the conversation: {message}")


def _strftime_now(fmt: str) -> str:
    return datetime.datetime.now().strftime(fmt)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, separators=None, sort_keys: bool = False) -> str:
    # transformers' tojson: no HTML escaping (jinja's own would turn quotes into \u0027 and break the prompt).
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _counted_range(*args: int):
    budget = _budget.get()
    span = range(*args)
    if len(span) > MAX_RANGE:  # jinja's own sandbox limit for one range
        raise TemplateTooExpensive(f"the chat template asks for a range of {len(span):,} numbers (at most {MAX_RANGE:,})")
    if budget.iterations + len(span) > RANGE_ITERATIONS:
        raise TemplateTooExpensive(f"the chat template loops more than {RANGE_ITERATIONS:,} times")
    budget.iterations += len(span)
    return span


class _GenerationTag(Extension):
    """`{% generation %}...{% endgeneration %}` marks the assistant's part for training; in a prompt it is plain content."""

    tags = {"generation"}

    def parse(self, parser) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


class _BoundedEnvironment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "%", "**"})

    def call_binop(self, context, op: str, left: Any, right: Any) -> Any:
        budget = _budget.get()
        if op == "*" and isinstance(left, (str, list, tuple)) and isinstance(right, int) and len(left) * right > budget.max_output:
            raise TemplateTooExpensive("the chat template repeats a string past the prompt size limit")
        if op == "*" and isinstance(right, (str, list, tuple)) and isinstance(left, int) and len(right) * left > budget.max_output:
            raise TemplateTooExpensive("the chat template repeats a string past the prompt size limit")
        if op == "**" and isinstance(right, (int, float)) and abs(right) > 64:
            raise TemplateTooExpensive("the chat template raises a number to a power above 64")
        if op == "%" and isinstance(left, str) and _format_widths(left) > budget.max_output:
            raise TemplateTooExpensive("the chat template formats a string past the prompt size limit")
        result = {"*": operator.mul, "%": operator.mod, "**": operator.pow}[op](left, right)
        if op == "%" and isinstance(result, str) and len(result) > budget.max_output:
            raise TemplateTooExpensive("the chat template formats a string past the prompt size limit")
        return result


def _format_widths(fmt: str) -> int:
    """The widest field a printf-style format asks for (a `*` width comes from the arguments: unbounded)."""
    widest = 0
    for width, precision in _PRINTF_FIELD.findall(fmt):
        for number in (width, precision):
            if number == "*":
                return 1 << 62
            if number:
                widest = max(widest, int(number))
    return widest


def _bounded_width(filter_):
    def bounded(value, width=80, *args, **kwargs):
        if isinstance(width, int) and width > _budget.get().max_output:
            raise TemplateTooExpensive("the chat template pads a string past the prompt size limit")
        return filter_(value, width, *args, **kwargs)

    return bounded


def _environment() -> ImmutableSandboxedEnvironment:
    env = _BoundedEnvironment(trim_blocks=True, lstrip_blocks=True, undefined=jinja2.ChainableUndefined, extensions=["jinja2.ext.loopcontrols", _GenerationTag])
    env.globals.update(raise_exception=_raise_exception, strftime_now=_strftime_now, range=_counted_range)
    env.filters["tojson"] = _tojson
    env.filters["center"] = _bounded_width(env.filters["center"])
    env.filters["indent"] = _bounded_width(env.filters["indent"])
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
        self.takes_tools = "tools" in meta.find_undeclared_variables(parsed)
        self.bos_token = bos_token
        self.eos_token = eos_token

    def render(self, messages: Sequence[dict], add_generation_prompt: bool = True, tools: Sequence[dict] | None = None) -> str:
        context = {"messages": list(messages), "add_generation_prompt": add_generation_prompt, "bos_token": self.bos_token, "eos_token": self.eos_token}
        if tools:
            context["tools"] = list(tools)
        max_output = max(MIN_OUTPUT_CHARS, OUTPUT_PER_INPUT_CHAR * (_text_size(context["messages"]) + _text_size(tools or [])))
        token = _budget.set(_Budget(max_output))
        try:
            pieces, size = [], 0
            for piece in self._template.generate(**context):
                size += len(piece)
                if size > max_output:
                    raise TemplateTooExpensive(f"the chat template writes more than {max_output:,} characters for this conversation")
                pieces.append(piece)
            return "".join(pieces)
        except TemplateError:
            raise
        except Exception as exc:  # a template is untrusted code: any failure is the template's
            raise TemplateError(f"the model's chat template failed: {type(exc).__name__}: {exc}") from None
        finally:
            _budget.reset(token)
