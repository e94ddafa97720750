"""Reasoning through the real runtime process and the starter model. The starter model does not think on its
own: a grammar makes its reply begin with a `<think>…</think>` block, as a reasoning model's does."""

import json

import pytest

from bad_input import expect_error
from runtime.client import RuntimeClient
from runtime.scheduler.scheduler import MAX_NEXT_TURN_HEADER
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, KvStoreInfoParams, ModelLoadParams, methods

pytestmark = pytest.mark.slow

# A thought of lower-case words, then an answer: the grammar ends the reply (its end of generation) after it.
THINKING = r'''root ::= "<think>" thought "</think>" "\n"* answer
thought ::= [a-z \n]{8,40}
answer ::= [A-Za-z ,.]{4,24}'''
QUESTION = [ChatMessage("system", "You are terse."), ChatMessage("user", "Why is the sky blue?")]


def think(client, messages, conversation, **kw):
    kw.setdefault("grammar", THINKING)
    kw.setdefault("temperature", 0.0)
    kw.setdefault("max_tokens", 100)
    texts, thoughts = [], []
    result = client.chat(ChatGenerateParams(conversation, list(messages), **kw), texts.append, 120, on_reasoning=thoughts.append)
    return result, texts, thoughts


def test_a_thinking_reply_streams_its_reasoning_apart_and_the_next_turn_reuses_the_cache(loaded_runtime):
    # Longer than what a reply's after-work evaluates unasked: the rewrite of the turn is more than a header.
    long_thought = THINKING.replace("{8,40}", "{100,120}").replace("{4,24}", "{20,24}")
    result, texts, thoughts = think(loaded_runtime, QUESTION, "thinks", grammar=long_thought)
    assert result.finish_reason == "stop"
    assert result.reasoning and result.text, result
    assert "<think>" not in result.reasoning + result.text and "</think>" not in result.reasoning + result.text
    assert "".join(thoughts) == result.reasoning and "".join(texts) == result.text
    s1 = result.stats
    assert s1.reasoning_tokens > 0 and s1.answer_tokens > 0
    assert s1.reasoning_tokens + s1.answer_tokens == s1.completion_tokens
    assert s1.ttft_ms > 0 and s1.ttfat_ms >= s1.ttft_ms and s1.thinking_ms > 0
    assert s1.completion_tokens > MAX_NEXT_TURN_HEADER

    # The next turn sends the reply back with its reasoning apart; SmolLM2's template drops it, and the reply's
    # after-work evaluated the answer as the template writes it: only the new message is left to evaluate.
    loaded_runtime.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)
    history = [*QUESTION, ChatMessage("assistant", result.text, reasoning=result.reasoning), ChatMessage("user", "And at sunset?")]
    second = loaded_runtime.chat(ChatGenerateParams("thinks", history, max_tokens=8, temperature=0.0), timeout=120)
    s2 = second.stats
    print(json.dumps({"first": {"prompt": s1.prompt_tokens, "reasoning": s1.reasoning_tokens, "answer": s1.answer_tokens},
                      "next_turn": {"prompt": s2.prompt_tokens, "reused": s2.prompt_tokens_reused, "evaluated": s2.prompt_tokens_evaluated}}))
    assert s2.prompt_tokens_reused + s2.prompt_tokens_evaluated == s2.prompt_tokens
    assert s2.prompt_tokens_reused >= s1.prompt_tokens + s1.answer_tokens - 4, (s1, s2)  # the turn, as the template writes it
    assert 0 < s2.prompt_tokens_evaluated <= 12, s2  # "And at sunset?<|im_end|>\n<|im_start|>assistant\n"


def test_reasoning_format_none_leaves_the_reply_as_written(loaded_runtime):
    result, texts, thoughts = think(loaded_runtime, QUESTION, "as-written", reasoning_format="none")
    assert result.text.startswith("<think>") and "</think>" in result.text
    assert result.reasoning == "" and thoughts == [] and "".join(texts) == result.text
    assert result.stats.reasoning_tokens == 0 and result.stats.answer_tokens == result.stats.completion_tokens


def test_a_reply_that_does_not_think_is_all_answer(loaded_runtime):
    result, texts, thoughts = think(loaded_runtime, QUESTION, "plain", grammar=None, max_tokens=12)
    assert result.text and result.reasoning == "" and thoughts == []
    assert result.stats.answer_tokens == result.stats.completion_tokens and result.stats.reasoning_tokens == 0


def test_deepseek_format_reads_the_reply_as_reasoning_until_the_closing_marker(loaded_runtime):
    grammar = r'''root ::= [a-z ]{8,60} "</think>" [A-Za-z ]{4,40}'''
    result, _texts, _thoughts = think(loaded_runtime, QUESTION, "deepseek", grammar=grammar, reasoning_format="deepseek")
    assert result.reasoning and result.text and "</think>" not in result.text


def test_the_reasoning_budget_closes_the_block_and_the_answer_follows(loaded_runtime):
    unlimited, _, _ = think(loaded_runtime, QUESTION, "budget", grammar=THINKING.replace("{8,40}", "{30,40}"))
    budget = 12
    result, texts, thoughts = think(loaded_runtime, QUESTION, "budget", grammar=THINKING.replace("{8,40}", "*"), reasoning_budget=budget)
    assert result.finish_reason == "stop" and result.text, result
    closing = 6  # "\n</think>\n\n" in SmolLM2's vocabulary is at most this many tokens
    assert budget <= result.stats.reasoning_tokens <= budget + closing, result.stats
    assert result.stats.reasoning_tokens < unlimited.stats.reasoning_tokens
    assert "".join(thoughts) == result.reasoning and "".join(texts) == result.text


def test_continue_reply_extends_a_cut_reply_in_place_from_the_live_cache(loaded_runtime):
    cut, _, _ = think(loaded_runtime, QUESTION, "continue", max_tokens=6)
    assert cut.finish_reason == "length" and cut.reasoning and not cut.text  # cut while thinking
    partial = ChatMessage("assistant", cut.text, reasoning=cut.reasoning)
    # The grammar of the rest: the block is open already.
    rest_grammar = THINKING.replace('root ::= "<think>" thought', "root ::= thought")
    rest, texts, thoughts = think(loaded_runtime, [*QUESTION, partial], "continue", continue_reply=True, grammar=rest_grammar)
    s = rest.stats
    # No new assistant header and nothing of the reply evaluated again: the cache held it as written.
    assert s.prompt_tokens_reused >= cut.stats.prompt_tokens + cut.stats.completion_tokens - 1, (cut.stats, s)
    assert s.prompt_tokens_evaluated <= 1, s
    assert rest.finish_reason == "stop" and rest.text
    assert "<think>" not in (cut.reasoning + rest.reasoning + rest.text)
    assert "".join(thoughts) == rest.reasoning and "".join(texts) == rest.text

    # A conversation whose last reply the runtime does not hold as written: the message is written back in the
    # model's markers (the block left open), and the rest still splits as reasoning, then answer.
    other, _, _ = think(loaded_runtime, [*QUESTION, partial], "continue-elsewhere", continue_reply=True, grammar=rest_grammar)
    assert other.finish_reason == "stop" and other.reasoning and other.text, other
    assert "</think>" not in other.reasoning + other.text


def test_max_tokens_none_goes_on_until_the_context_is_full(starter_model):
    with RuntimeClient() as client:
        client.initialize("pytest")
        loaded = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=64))
        long_question = "Please write a very long story about the sea, the sky, the wind and the old lighthouse keeper."
        params = ChatGenerateParams("long", [ChatMessage("user", long_question)], grammar="root ::= [a-z ]+", temperature=0.0)
        assert params.max_tokens is None
        result = client.chat(params, timeout=300)
        assert result.finish_reason == "length" and result.stats.context_full, result.stats
        assert result.stats.prompt_tokens + result.stats.completion_tokens >= loaded.n_ctx - 1
        short = client.chat(ChatGenerateParams("short", [ChatMessage("user", "Hi")], max_tokens=3, temperature=0.0), timeout=60)
        assert short.finish_reason == "length" and not short.stats.context_full


BASE = {"conversation_id": "bad", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    "extra, match",
    [
        ({"reasoning_format": "harmony"}, "params.reasoning_format"),
        ({"reasoning_effort": "extreme"}, "params.reasoning_effort"),
        ({"enable_thinking": "yes"}, "params.enable_thinking"),
        ({"reasoning_budget": -5}, "params.reasoning_budget"),
        ({"reasoning_budget": "10"}, "params.reasoning_budget"),
        ({"continue_reply": True}, "params.continue_reply"),
        ({"messages": [{"role": "assistant", "content": "x", "reasoning": ["no"]}]}, "params.messages[0].reasoning"),
        ({"max_tokens": -1}, "params.max_tokens"),
    ],
)
def test_bad_reasoning_fields_are_refused_naming_the_field(loaded_runtime, extra, match):
    expect_error(loaded_runtime, "chat.generate", {**BASE, **extra}, ErrorCode.INVALID_PARAMS, match)
