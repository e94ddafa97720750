"""The real chat templates of today's reasoning models (tests/data/templates, SOURCES.md there): their markers
are found, the prompt says whether the reply starts inside a block, a reply in their style splits at every
cut, past reasoning stays out of the prompt where the template drops it, and their switches take effect."""

from pathlib import Path

import pytest

from runtime.engine.chat_template import ChatTemplate
from runtime.reasoning.markers import HARMONY, THINK, opens_block, syntax_for
from runtime.reasoning.splitter import Parts, ReasoningSplitter

TEMPLATES = Path(__file__).parents[2] / "data" / "templates"
QWEN3 = "Qwen-Qwen3-0.6B.jinja"
R1_DISTILL = "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"
GPT_OSS = "openai-gpt-oss-120b.jinja"
SMOLLM3 = "HuggingFaceTB-SmolLM3-3B.jinja"
PHI4_REASONING = "microsoft-Phi-4-reasoning.jinja"

THOUGHT = "The user asks for 2+2. That is 4."
ANSWER = "2 + 2 = 4."
# What each model writes after its prompt (R1 distills: the prompt opened the block; gpt-oss: harmony).
REPLIES = {
    QWEN3: f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}",
    R1_DISTILL: f"{THOUGHT}\n</think>\n\n{ANSWER}",
    GPT_OSS: f"<|channel|>analysis<|message|>{THOUGHT}<|end|><|start|>assistant<|channel|>final<|message|>{ANSWER}",
    SMOLLM3: f"<think>\n{THOUGHT}\n</think>\n{ANSWER}",
    PHI4_REASONING: f"<think>{THOUGHT}</think>{ANSWER}",
}
SYNTAX = {QWEN3: THINK, R1_DISTILL: THINK, GPT_OSS: HARMONY, SMOLLM3: THINK, PHI4_REASONING: THINK}
OPENS_IN_PROMPT = {QWEN3: False, R1_DISTILL: True, GPT_OSS: False, SMOLLM3: False, PHI4_REASONING: False}


def template(name: str) -> ChatTemplate:
    return ChatTemplate((TEMPLATES / name).read_text(encoding="utf-8"), "<|bos|>", "<|eos|>")


def question() -> list[dict]:
    return [{"role": "user", "content": "What is 2+2?"}]


@pytest.mark.parametrize("name", list(REPLIES))
def test_the_markers_and_the_open_block_come_from_the_template(name):
    source = (TEMPLATES / name).read_text(encoding="utf-8")
    syntax = syntax_for(source)
    assert syntax == SYNTAX[name] and syntax.named
    prompt = template(name).render(question(), add_generation_prompt=True)
    assert opens_block(prompt, syntax) is OPENS_IN_PROMPT[name]


@pytest.mark.parametrize("name", list(REPLIES))
def test_a_reply_in_the_models_style_splits_the_same_at_every_cut(name):
    text, syntax = REPLIES[name], SYNTAX[name]
    prompt = template(name).render(question(), add_generation_prompt=True)
    for cut in range(len(text) + 1):
        splitter = ReasoningSplitter(syntax, opens_block(prompt, syntax))
        out = Parts()
        for piece in (text[:cut], text[cut:]):
            out += splitter.push(piece)
        out += splitter.finish()
        assert (out.reasoning, out.answer) == (THOUGHT, ANSWER), cut


@pytest.mark.parametrize("name", list(REPLIES))
def test_past_reasoning_is_not_sent_back_into_the_prompt(name):
    """The engine hands every template the reasoning (reasoning_content, thinking); all five drop it from past turns."""
    past = {"role": "assistant", "content": ANSWER, "reasoning_content": THOUGHT, "thinking": THOUGHT}
    prompt = template(name).render([*question(), past, {"role": "user", "content": "And 3+3?"}], add_generation_prompt=True)
    assert ANSWER in prompt and THOUGHT not in prompt


def test_qwen3_renders_the_reasoning_of_a_turn_after_the_last_question():
    """Qwen3 keeps the reasoning of the turn being continued (after the last user message): it wants it back."""
    past = {"role": "assistant", "content": ANSWER, "reasoning_content": THOUGHT}
    prompt = template(QWEN3).render([*question(), past], add_generation_prompt=False)
    assert f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}" in prompt


def test_enable_thinking_false_closes_the_block_in_the_prompt():
    for name, mark in ((QWEN3, "<think>\n\n</think>\n\n"), (SMOLLM3, "/no_think")):
        on = template(name).render(question(), add_generation_prompt=True, options={"enable_thinking": True})
        off = template(name).render(question(), add_generation_prompt=True, options={"enable_thinking": False})
        assert mark not in on and mark in off
        assert not opens_block(off, THINK)


def test_reasoning_effort_reaches_gpt_oss_and_no_other_template():
    assert "Reasoning: high" in template(GPT_OSS).render(question(), options={"reasoning_effort": "high"})
    assert "Reasoning: medium" in template(GPT_OSS).render(question())
    assert template(QWEN3).options == {"enable_thinking"}
    assert template(R1_DISTILL).options == frozenset()
