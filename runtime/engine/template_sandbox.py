"""The sandbox chat templates run in: jinja2's immutable sandbox, with every way a template can make work bounded.

A chat template comes inside a downloaded model file, so it is untrusted code. jinja2's
sandbox keeps it away from Python's internals; this module keeps it from spending
memory or time:

- Every loop iteration counts against one budget per render: `{% for %}` over anything
  (a list, a string, a dict, a filter's result), a recursive loop's `loop(...)` (and its
  call, as RECURSION_STEPS), and the numbers a `range` makes. Loops that write nothing
  are caught too.
- Every operation that can make a string or list bigger than its inputs is checked
  before it allocates: `*`, `+`, `~`, `%` (widths, and fields times arguments), the
  str methods `zfill`, `ljust`, `rjust`, `center`, `expandtabs`, `replace`, `join`,
  `translate`, `format` and `format_map` (each field as it is formatted), and the
  filters `center`, `indent`, `wordwrap`, `format`, `join`, `replace`, `batch`,
  `slice`, `sum` and `tojson`. Nothing may outgrow the render's output limit.
- `lipsum` (up to any number of paragraphs) and `urlize` (its `target` and `rel` are
  written once per link) are gone: no chat template needs them.
- The request's cancel flag, when the caller gives one (`cancelled_by`), is looked at on
  every counted step, so a render for a cancelled reply stops (RenderCancelled).

Loops are counted by rewriting the parsed template: each `{% for %}`'s iterable and
each `~` become calls to methods of the environment (`environment.<name>` in the
compiled code, a name no template can rebind).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import json
import operator
import re
import threading
import types
from typing import Any, Callable, Iterable, Iterator

from jinja2 import nodes, pass_environment
from jinja2.filters import make_attrgetter
from jinja2.runtime import LoopContext
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment, SandboxedFormatter
from jinja2.visitor import NodeTransformer

# Loop iterations of one render together (with the numbers `range` makes). Real templates iterate over
# the messages once or twice: far below. 3000 x 3000 nested loops that write nothing: refused in ~0.5 s.
ITERATIONS = 1_000_000
# A recursive loop's `loop(...)` starts a loop of its own (a call, a loop context): it counts as this many iterations.
RECURSION_STEPS = 10
# json.dumps's `indent` (templates use 2 or 4): a big one is written once per line of the JSON.
MAX_JSON_INDENT = 64

_PRINTF_FIELD = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?[a-zA-Z%]")
_DIGITS = re.compile(r"\d+")


class TemplateError(ValueError):
    pass


class TemplateTooExpensive(TemplateError):
    """The template would do more work than any chat template needs (a loop bomb, an output bomb)."""


class RenderCancelled(Exception):
    """The request was cancelled while its prompt was being rendered: not the template's fault, so no fallback."""


class Budget:
    """What one render may still do."""

    def __init__(self, max_output: int, cancel: threading.Event | None = None):
        self.steps = 0
        self.max_output = max_output
        self.cancel = cancel

    def step(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > ITERATIONS:
            raise TemplateTooExpensive(f"the chat template loops more than {ITERATIONS:,} times")
        if self.cancel is not None and self.cancel.is_set():
            raise RenderCancelled()

    def allow(self, size: int, what: str) -> None:
        """Refuse, before it is made, a string or list of `size` characters or items past the output limit."""
        if size > self.max_output:
            raise TemplateTooExpensive(f"the chat template {what} past the prompt size limit ({size:,} > {self.max_output:,})")


_budget: contextvars.ContextVar[Budget] = contextvars.ContextVar("chat_template_budget")
_cancel: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("chat_template_cancel", default=None)


def budget() -> Budget:
    return _budget.get()


@contextlib.contextmanager
def rendering(max_output: int) -> Iterator[Budget]:
    """The budget of one render, with the cancel flag of the request it is for (`cancelled_by`)."""
    token = _budget.set(Budget(max_output, _cancel.get()))
    try:
        yield _budget.get()
    finally:
        _budget.reset(token)


@contextlib.contextmanager
def cancelled_by(cancel: threading.Event | None) -> Iterator[None]:
    """Renders inside this block stop with RenderCancelled once `cancel` is set."""
    token = _cancel.set(cancel)
    try:
        yield
    finally:
        _cancel.reset(token)


# ---- sizes, predicted before the work -------------------------------------------------------


def _int(value: Any) -> int:
    """An integer argument, or 0 when it is none (the real call then fails with its own TypeError)."""
    try:
        return operator.index(value)
    except TypeError:
        return 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _replace_size(s: str, old: Any, new: Any, count: Any = -1) -> int:
    old, new = _text(old), _text(new)
    found = len(s) + 1 if old == "" else s.count(old)
    count = _int(count) if count is not None else -1
    if count >= 0:
        found = min(found, count)
    return len(s) + found * max(len(new) - len(old), 0)


def _translate_size(s: str, table: Any) -> int:
    longest = max((len(v) for v in table.values() if isinstance(v, str)), default=1) if isinstance(table, dict) else 1
    return len(s) * max(longest, 1)


def _printf_size(fmt: str, args: Any) -> int:
    """At most how long `fmt % args` is: its text, plus for each field its width or the longest argument."""
    fields = _PRINTF_FIELD.findall(fmt)
    widths = [int(n) for field in fields for n in field if n and n != "*"]
    if any("*" in field for field in fields):
        star = [a for a in (args if isinstance(args, tuple) else (args,)) if isinstance(a, int)]
        widths += [abs(a) for a in star]
    values = args.values() if isinstance(args, dict) else args if isinstance(args, tuple) else (args,)
    longest = max((len(_text(v)) for v in values), default=0)
    return len(fmt) + len(fields) * (max(widths, default=0) + longest)


_STR_METHODS: dict[str, Callable[..., int]] = {
    "zfill": lambda s, width, *_: max(len(s), _int(width)),
    "ljust": lambda s, width, *_: max(len(s), _int(width)),
    "rjust": lambda s, width, *_: max(len(s), _int(width)),
    "center": lambda s, width, *_: max(len(s), _int(width)),
    "expandtabs": lambda s, tabsize=8: len(s) + s.count("\t") * max(_int(tabsize), 0),
    "replace": _replace_size,
    "translate": _translate_size,
}


# ---- the environment ----------------------------------------------------------------------


class _BoundedFormatter(SandboxedFormatter):
    """str.format / format_map, each field checked before it is formatted and the total as it grows."""

    def __init__(self, env):
        super().__init__(env)
        self._size = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        widest = max((int(n) for n in _DIGITS.findall(format_spec)), default=0)
        budget().allow(widest, "formats a field")
        text = super().format_field(value, format_spec)
        self._size += len(text)
        budget().allow(self._size, "formats a string")
        return text


class _CountLoops(NodeTransformer):
    """Every `{% for %}` iterates through environment.counted_loop; every `~` goes through environment.bounded_concat."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Call(nodes.EnvironmentAttribute("counted_loop"), [node.iter], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Call(nodes.EnvironmentAttribute("bounded_concat"), node.nodes, [], None, None, lineno=node.lineno)


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "%", "**", "+"})

    def __init__(self, **options):
        super().__init__(**options)
        for name in ("lipsum", "urlize"):
            self.globals.pop(name, None)
            self.filters.pop(name, None)
        self.globals["range"] = _counted_range
        for name, size in _FILTER_SIZES.items():
            self.filters[name] = _checked(self.filters[name], size, name)
        self.filters.update(join=_join, sum=_sum, format=_format, tojson=tojson)

    def _parse(self, source, name, filename) -> nodes.Template:  # under both parse() and from_string()
        template = super()._parse(source, name, filename)
        template = _CountLoops().visit(template)
        template.set_environment(self)
        return template

    # ---- called from compiled templates ----
    def counted_loop(self, iterable: Iterable) -> Iterator:
        for item in iterable:
            budget().step()
            yield item

    def bounded_concat(self, *parts: Any) -> str:
        texts = [_text(p) for p in parts]
        budget().allow(sum(map(len, texts)), "joins strings")
        return "".join(texts)

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (jinja's own signature)
        if isinstance(__obj, LoopContext) and args:  # a recursive loop's `loop(children)`: counted as well
            budget().step(RECURSION_STEPS)
            args = (__self.counted_loop(args[0]), *args[1:])
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context, op: str, left: Any, right: Any) -> Any:
        b = budget()
        sized = (str, list, tuple)
        if op == "*" and isinstance(left, sized) and isinstance(right, int) and len(left) * right > b.max_output:
            raise TemplateTooExpensive("the chat template repeats a string past the prompt size limit")
        if op == "*" and isinstance(right, sized) and isinstance(left, int) and len(right) * left > b.max_output:
            raise TemplateTooExpensive("the chat template repeats a string past the prompt size limit")
        if op == "+" and isinstance(left, sized) and isinstance(right, sized):
            b.allow(len(left) + len(right), "joins strings")
        if op == "**" and isinstance(right, (int, float)) and abs(right) > 64:
            raise TemplateTooExpensive("the chat template raises a number to a power above 64")
        if op == "%" and isinstance(left, str):
            b.allow(_printf_size(left, right), "formats a string")
        result = {"*": operator.mul, "%": operator.mod, "**": operator.pow, "+": operator.add}[op](left, right)
        if isinstance(result, (str, list, tuple)):  # what the checks above could not foresee (a dict's text after %)
            b.allow(len(result), "makes a string")
        return result

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """A str method that can grow a string, checked before it runs (called wherever a template reads one)."""
        s = value.__self__ if isinstance(value, (types.MethodType, types.BuiltinMethodType)) else None
        if not isinstance(s, str):
            return super().wrap_str_format(value)
        name = value.__name__
        if name in ("format", "format_map"):
            return self._bounded_format(s, value)
        if name == "join":
            return functools.update_wrapper(lambda items: _joined(s, items, strict=True), value)
        size = _STR_METHODS.get(name)
        if size is None:
            return None

        def checked(*args: Any, **kwargs: Any) -> str:
            budget().allow(size(s, *args, **kwargs), f"makes a string with {name}()")
            return value(*args, **kwargs)

        return functools.update_wrapper(checked, value)

    def _bounded_format(self, s: str, method: Callable) -> Callable[..., str]:
        def formatted(*args: Any, **kwargs: Any) -> str:
            if method.__name__ == "format_map":
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                kwargs, args = args[0], ()
            return type(s)(_BoundedFormatter(self).vformat(s, args, kwargs))

        return functools.update_wrapper(formatted, method)


def _counted_range(*args: int) -> range:
    span = range(*args)
    if len(span) > MAX_RANGE:  # jinja's own sandbox limit for one range
        raise TemplateTooExpensive(f"the chat template asks for a range of {len(span):,} numbers (at most {MAX_RANGE:,})")
    budget().step(len(span))
    return span


def _joined(separator: str, items: Iterable, strict: bool = False) -> str:
    """separator.join(items), refused before it is made if too long. The join filter writes any item as text;
    str.join (`strict`) takes strings only, as in Python."""
    texts = list(items) if strict else [_text(item) for item in items]
    budget().allow(sum(len(t) for t in texts if isinstance(t, str)) + len(separator) * max(len(texts) - 1, 0), "joins strings")
    return separator.join(texts)


# ---- filters ------------------------------------------------------------------------------

# filter -> the size of what it would make, from its arguments (jinja's defaults repeated)
_FILTER_SIZES: dict[str, Callable[..., int]] = {
    "center": lambda value, width=80: max(len(_text(value)), _int(width)),
    "indent": lambda s, width=4, first=False, blank=False: len(_text(s)) + (_text(s).count("\n") + 1) * (len(width) if isinstance(width, str) else _int(width)),
    "wordwrap": lambda s, width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True: len(_text(s)) + (len(_text(s)) + 1) * len(_text(wrapstring or "\n")),
    "replace": lambda s, old, new, count=None: _replace_size(_text(s), old, new, count),
    "batch": lambda value, linecount, fill_with=None: _int(linecount) if fill_with is not None else 0,
    "slice": lambda value, slices, fill_with=None: _int(slices),
}


def _checked(filter_: Callable, size: Callable[..., int], name: str) -> Callable:
    """`filter_`, refused when what it would make is past the output limit (jinja's pass_* marks kept)."""
    passes_first = hasattr(filter_, "jinja_pass_arg")

    @functools.wraps(filter_)
    def checked(*args: Any, **kwargs: Any) -> Any:
        made = size(*(args[1:] if passes_first else args), **kwargs)
        budget().allow(made, f"makes a string with the {name} filter")
        result = filter_(*args, **kwargs)
        if isinstance(result, str):
            budget().allow(len(result), f"makes a string with the {name} filter")
        return result

    return checked


@pass_environment
def _join(environment, value: Iterable, d: Any = "", attribute: Any = None) -> str:
    if attribute is not None:
        value = map(make_attrgetter(environment, attribute), value)
    return _joined(_text(d), value)


@pass_environment
def _sum(environment, iterable: Iterable, attribute: Any = None, start: Any = 0) -> Any:
    """jinja's sum, without the quadratic time of adding up lists one by one."""
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    items = list(iterable)
    if isinstance(start, (list, tuple)):
        budget().allow(len(start) + sum(len(i) for i in items if isinstance(i, (list, tuple))), "adds up lists")
        return type(start)(itertools.chain(start, *items))
    return sum(items, start)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    if args and kwargs:
        raise TypeError("can't handle positional and keyword arguments at the same time")
    fmt = _text(value)
    values = kwargs or args
    budget().allow(_printf_size(fmt, values), "formats a string")
    return fmt % values


def tojson(value: Any, ensure_ascii: bool = False, indent: int | str | None = None, separators=None, sort_keys: bool = False) -> str:
    """transformers' tojson: no HTML escaping (jinja's own would turn quotes into \\u0027 and break the prompt).

    `indent` and `separators` are written once per item or line: each at most MAX_JSON_INDENT characters."""
    lengths = [len(indent) if isinstance(indent, str) else _int(indent) if indent is not None else 0]
    if separators is not None:
        lengths += [len(_text(part)) for part in separators]
    if max(lengths) > MAX_JSON_INDENT:
        raise TemplateTooExpensive(f"the chat template asks tojson for an indent or separator longer than {MAX_JSON_INDENT}")
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    budget().allow(len(text), "writes JSON")
    return text
