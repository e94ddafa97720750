"""Hostile chat templates: padding, formatting, lipsum, loops over anything and strings that double are refused
through the existing path (TemplateError; the model replies through ChatML and says so), and a render for a
cancelled request stops inside the template.

The templates here make their big strings without writing them (`{% set %}`, `{% if %}`): the output limit
alone would not see them. Sizes are kept to what an unbounded sandbox survives too (tens of MB), so the
tests can be run against one.
"""

from __future__ import annotations

import threading

import pytest

from gguf_files import with_chat_template
from runtime.engine.chat_template import ChatTemplate, RenderCancelled, TemplateError
from runtime.engine.context_window import FitCancelled, fit_to_context
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams

USER = [{"role": "user", "content": "Hi"}]

HOSTILE = {
    "zfill": ("{% set x = 'x'.zfill(50000000) %}", "zfill()"),
    "ljust": ("{% set x = 'x'.ljust(50000000) %}", "ljust()"),
    "rjust through attr": ("{% set x = 'x'|attr('rjust') %}{% set y = x(50000000) %}", "rjust()"),
    "center": ("{% set x = 'x'.center(50000000) %}", "center()"),
    "expandtabs": ("{% set x = ('\t' * 1000).expandtabs(50000) %}", "expandtabs()"),
    "format width": ("{% set x = '{:>3000000}'.format(1) %}", "formats a field"),
    "format width from an argument": ("{% set x = '{:>{}}'.format(1, 3000000) %}", "formats a field"),
    "format fields times a long argument": ("{% set x = ('{0}' * 1000).format('x' * 10000) %}", "formats a string"),
    "format_map width": ("{% set x = '{a:>3000000}'.format_map({'a': 1}) %}", "formats a field"),
    "printf fields times a long argument": ("{% set x = ('%(a)s' * 1000) % {'a': 'x' * 10000} %}", "formats a string"),
    "format filter": ("{% set x = '%3000000s'|format('x') %}", "formats a string"),
    "replace": ("{% set x = ('x' * 1000).replace('x', 'y' * 10000) %}", "replace()"),
    "replace filter": ("{% set x = ('x' * 1000)|replace('x', 'y' * 10000) %}", "replace filter"),
    "join": ("{% set x = ('y' * 10000).join(['x'] * 1000) %}", "joins strings"),
    "join filter": ("{% set x = (['x' * 10000] * 1000)|join %}", "joins strings"),
    "indent filter": ("{% set x = ('\n' * 1000)|indent(10000) %}", "indent filter"),
    "center filter": ("{% set x = 'x'|center(3000000) %}", "center filter"),
    "wordwrap filter": ("{% set x = ('x' * 1000)|wordwrap(1, wrapstring='y' * 10000) %}", "wordwrap filter"),
    "tojson indent": ("{% set x = [[1, 2], [3]]|tojson(indent=100000) %}", "tojson"),
    "batch filler": ("{% set x = [1]|batch(3000000, 0)|list %}", "batch filter"),
    "lipsum": ("{% set x = lipsum(1000) %}", "lipsum"),
    "a loop over a long string": ("{% for c in 'x' * 1500000 %}{% endfor %}", "loops more than"),
    "nested loops over strings": ("{% set s = 'x' * 1200 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}", "loops more than"),
    "a loop over a list": ("{% for c in [0] * 1500000 %}{% endfor %}", "loops more than"),
    "a recursive loop": ("{% for x in [5] recursive %}{% if x %}{{ loop([x - 1] * 20) }}{% endif %}{% endfor %}", "loops more than"),
    "a string doubled with ~": ("{% set ns = namespace(s='x') %}{% for i in range(22) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "joins strings"),
    "a string doubled with +": ("{% set ns = namespace(s='x') %}{% for i in range(22) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "joins strings"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_template_is_refused(name):
    source, match = HOSTILE[name]
    with pytest.raises(TemplateError, match="chat template") as refused:
        ChatTemplate(source).render(USER)
    assert match in str(refused.value)


def test_templates_that_pad_format_join_and_loop_a_little_still_render():
    source = (
        "{{ 'x'.zfill(3) }}|{{ '{:>3}'.format(1) }}|{{ '{a}'.format_map({'a': 2}) }}|{{ ', '.join(['a', 'b']) }}|{{ ['a', 'b']|join('-') }}|"
        "{{ 'ab'|replace('a', 'c') }}|{{ '%s-%d'|format('a', 3) }}|{{ '%3s' % 'a' }}|{{ 'a' ~ 1 }}|{{ [[1], [2]]|sum(start=[]) }}|"
        "{% for c in 'abc' %}{{ loop.index }}{{ c }}{% endfor %}|{% for x in [[1, [2]], [3]] recursive %}{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}{% endif %}{% endfor %}|"
        "{{ [1]|tojson(indent=2) }}"
    )
    assert ChatTemplate(source).render(USER) == "00x|  1|2|a, b|a-b|cb|a-3|  a|a1|[1, 2]|1a2b3c|123|[\n  1\n]"


class _CancelsWhenRead(dict):
    """A message that sets the request's cancel flag when the template reads its content: a cancel that
    comes while the template runs, at a known point."""

    def __init__(self, cancel: threading.Event, **fields):
        super().__init__(**fields)
        self._cancel = cancel

    def __getitem__(self, key):
        if key == "content":
            self._cancel.set()
        return super().__getitem__(key)


LOOPING = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


def test_a_render_stops_once_its_request_is_cancelled():
    from runtime.engine.chat_template import cancelled_by

    cancel = threading.Event()
    messages = [_CancelsWhenRead(cancel, role="user", content="first"), {"role": "user", "content": "second"}]
    with cancelled_by(cancel), pytest.raises(RenderCancelled):
        ChatTemplate(LOOPING).render(messages)
    assert not isinstance(RenderCancelled(), TemplateError)  # not the template's fault: no ChatML fallback
    assert ChatTemplate(LOOPING).render(messages) == "firstsecond"  # outside a cancellable request: renders


def test_fitting_a_conversation_stops_when_the_request_is_cancelled_during_a_render():
    """The engine's path (context_window.fit_to_context): a cancel inside the template ends the fit."""
    cancel = threading.Event()
    template = ChatTemplate(LOOPING)
    renders = []

    def render(messages: list[ChatMessage]) -> list[int]:
        renders.append(len(messages))
        dicts = [_CancelsWhenRead(cancel, role=m.role, content=m.content) for m in messages]
        return list(range(len(template.render(dicts))))

    with pytest.raises(FitCancelled):
        fit_to_context([ChatMessage("user", "a"), ChatMessage("user", "b")], render, 4096, 16, {}, "c", cancel=cancel)
    assert renders == [2]


# ---- through the real runtime: refused at load, replies through ChatML and say so -----------------------


@pytest.fixture(scope="module")
def hostile_template_models(starter_model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-templates")
    names = ("format width", "a loop over a long string", "a string doubled with ~")
    return {name: with_chat_template(starter_model, folder / f"{i}.gguf", HOSTILE[name][0] + "{{ messages[0]['content'] }}") for i, name in enumerate(names)}


@pytest.fixture(scope="module")
def template_runtime():
    from runtime.client import RuntimeClient

    client = RuntimeClient()
    client.initialize("pytest-hostile-templates")
    yield client
    client.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", ("format width", "a loop over a long string", "a string doubled with ~"))
def test_a_model_with_a_hostile_template_replies_through_chatml_and_says_so(template_runtime, hostile_template_models, name):
    loaded = template_runtime.load_model(ModelLoadParams(path=str(hostile_template_models[name]), n_ctx=512, n_threads=1))
    assert HOSTILE[name][1] in loaded.chat_template_error and not loaded.has_chat_template
    _, wait = template_runtime.generate(ChatGenerateParams("t", [ChatMessage("user", "Hi")], max_tokens=4, temperature=0.0))
    result = wait(120)
    assert HOSTILE[name][1] in result.stats.chat_template_fallback and result.stats.chat_template_fallback.endswith("using ChatML")
    assert result.stats.completion_tokens > 0

