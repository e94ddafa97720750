"""Chat templates render as transformers renders them, hostile ones are refused fast, and a failing one is never silent."""

from __future__ import annotations

import time

import pytest

from gguf_files import with_chat_template
from runtime.engine.chat_template import ChatTemplate, TemplateError, TemplateTooExpensive
from runtime.engine.tools import template_messages
from runtime.gguf.reader import read_file_header
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams, ToolCall, ToolSpec

USER = [{"role": "user", "content": "Hi"}]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("{% for m in messages %}{{ m.content }}{% break %}{% endfor %}!", "Hi!"),  # loopcontrols
        ("{% for m in messages %}{% if m.role == 'user' %}{% continue %}{% endif %}x{% endfor %}.", "."),
        ("{% for m in messages %}{% generation %}[{{ m.content }}]{% endgeneration %}{% endfor %}", "[Hi]"),  # plain content
        ("{{ {'b': \"it's <b>\", 'a': 1} | tojson }}", '{"b": "it\'s <b>", "a": 1}'),  # not HTML-escaped
        ("{{ {'b': 2, 'a': 1} | tojson(sort_keys=True) }}", '{"a": 1, "b": 2}'),
        ("{{ [1] | tojson(indent=2) }}", "[\n  1\n]"),
        ("{{ 'é' | tojson }}", '"é"'),  # ensure_ascii off, as in transformers
        ("{{ strftime_now('%Y') | length }}", "4"),
        ("{% if tools %}{{ tools[0].function.name }}{% endif %}", "get_weather"),
    ],
)
def test_template_features_render_as_in_transformers(source, expected):
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    assert ChatTemplate(source).render(USER, tools=tools) == expected


def test_raise_exception_is_the_templates_refusal():
    with pytest.raises(TemplateError, match="refused the conversation: roles must alternate"):
        ChatTemplate("{{ raise_exception('roles must alternate') }}").render(USER)


def test_templates_say_whether_they_take_tools():
    assert ChatTemplate("{% if tools %}x{% endif %}").takes_tools
    assert not ChatTemplate("{{ messages[0].content }}").takes_tools


@pytest.mark.parametrize(
    "source",
    [
        "{% for i in range(3000) %}{% for j in range(3000) %}{% endfor %}{% endfor %}",  # writes nothing: the range budget
        "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",  # the output limit
        "{{ 'x' * 1000000000 }}",
        "{{ [0] * 1000000000 }}",
        "{{ '%1000000000s' % 'x' }}",
        "{{ '%*s' % (1000000000, 'x') }}",
        "{{ 'x' | center(1000000000) }}",
        "{{ 'x' | indent(1000000000) }}",
        "{{ 10 ** 100000000 }}",
        "{% for i in range(10 ** 9) %}{% endfor %}",  # jinja's own range limit
        "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    ],
)
def test_a_hostile_template_is_refused_within_a_second_or_two(source):
    started = time.perf_counter()
    with pytest.raises(TemplateError) as refused:
        ChatTemplate(source).render(USER)
    assert time.perf_counter() - started < 2.0
    assert "chat template" in str(refused.value)


def test_the_output_limit_grows_with_the_conversation():
    long = [{"role": "user", "content": "y" * 3_000_000}]
    template = ChatTemplate("{% for m in messages %}{{ m.content }}{% endfor %}")
    assert len(template.render(long)) == 3_000_000  # a long conversation renders
    with pytest.raises(TemplateTooExpensive):
        ChatTemplate("{% for i in range(5) %}{% for m in messages %}{{ m.content }}{% endfor %}{% endfor %}").render(long)


def test_the_starter_models_own_template_renders_with_tools_in_a_system_message(starter_model):
    template = ChatTemplate(read_file_header(starter_model).chat_template)
    assert not template.takes_tools
    plain = template.render(template_messages([ChatMessage("user", "Hi")], [], template.takes_tools))
    assert plain == "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    messages = [
        ChatMessage("user", "Weather in Paris?"),
        ChatMessage("assistant", "", [ToolCall("call_1", "get_weather", '{"city": "Paris"}')]),
        ChatMessage("tool", "sunny", tool_call_id="call_1", name="get_weather"),
    ]
    tools = [ToolSpec("get_weather", "The weather in a city", {"type": "object", "properties": {"city": {"type": "string"}}})]
    text = template.render(template_messages(messages, tools, template.takes_tools))
    assert text.startswith("<|im_start|>system\n# Tools") and '"name": "get_weather"' in text
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in text
    assert "<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>" in text


@pytest.fixture(scope="module")
def template_models(starter_model, tmp_path_factory):
    """Copies of the starter model: one whose template needs transformers' features, one whose template cannot parse."""
    folder = tmp_path_factory.mktemp("templates")
    featured = with_chat_template(starter_model, folder / "featured.gguf", "{% for m in messages %}{% generation %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endgeneration %}{% if false %}{% break %}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
    broken = with_chat_template(starter_model, folder / "broken.gguf", "{{ messages | no_such_filter }}")
    return featured, broken


def reply(runtime):
    _, wait = runtime.generate(ChatGenerateParams("t", [ChatMessage("user", "Hi")], max_tokens=4, temperature=0.0))
    return wait(120)


@pytest.mark.slow
def test_a_template_that_fails_is_said_at_load_and_in_every_reply(runtime, template_models):
    featured, broken = template_models
    loaded = runtime.load_model(ModelLoadParams(path=str(featured), n_ctx=512, n_threads=1))
    assert loaded.chat_template_error is None
    result = reply(runtime)
    assert result.stats.chat_template_fallback == ""

    loaded = runtime.load_model(ModelLoadParams(path=str(broken), n_ctx=512, n_threads=1))
    assert "no_such_filter" in loaded.chat_template_error and not loaded.has_chat_template
    result = reply(runtime)
    assert "no_such_filter" in result.stats.chat_template_fallback and result.stats.chat_template_fallback.endswith("using ChatML")
    assert result.stats.completion_tokens > 0
