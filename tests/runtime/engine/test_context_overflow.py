"""A conversation longer than the context goes on: the oldest turns are left out, and the result says so."""

import pytest

from runtime.engine.context_window import fit_to_context, reply_room
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, ModelLoadParams, RpcError


def words(messages):
    """A stand-in tokenizer for the policy alone: one token per word, two around each message."""
    return [0 for m in messages for _ in range(len(m.content.split()) + 2)]


def conversation(n_turns, words_per_message=10, system=True):
    messages = [ChatMessage("system", "be brief")] if system else []
    for i in range(n_turns):
        messages.append(ChatMessage("user", " ".join([f"q{i}"] * words_per_message)))
        messages.append(ChatMessage("assistant", " ".join([f"a{i}"] * words_per_message)))
    messages.append(ChatMessage("user", "last question"))
    return messages


def test_a_conversation_that_fits_is_left_whole():
    messages = conversation(3)
    tokens, dropped = fit_to_context(messages, words, 200, 32, {}, "c")
    assert dropped == 0 and len(tokens) == len(words(messages))


def test_oldest_whole_turns_go_the_system_prompt_and_the_newest_message_stay():
    messages = conversation(20)  # 4 + 20 * 24 + 4 = 488 "tokens"
    kept = []
    tokens, dropped = fit_to_context(messages, lambda m: kept.append(m) or words(m), 256, 32, {}, "c")
    final = kept[-1]
    assert dropped > 0 and final[0].role == "system" and final[-1].content == "last question"
    assert final[1].role == "user"  # the kept history starts with a user turn
    assert final == messages[:1] + messages[1 + dropped :]
    assert len(tokens) + reply_room(256, 32) <= 0.75 * 256  # headroom for the next turns


def test_the_cut_is_kept_for_the_next_turns_so_their_prompts_share_a_prefix():
    cuts = {}
    messages = conversation(20)
    _, dropped = fit_to_context(messages, words, 256, 32, cuts, "c")
    messages += [ChatMessage("assistant", "short"), ChatMessage("user", "next")]
    _, dropped_next = fit_to_context(messages, words, 256, 32, cuts, "c")
    assert dropped_next == dropped
    _, other = fit_to_context(conversation(2), words, 256, 32, cuts, "other")
    assert other == 0


def test_when_the_newest_message_fits_only_alone_the_system_prompt_goes_too():
    messages = [ChatMessage("system", " ".join(["s"] * 100)), ChatMessage("user", " ".join(["u"] * 150))]
    tokens, dropped = fit_to_context(messages, words, 200, 32, {}, "c")
    assert dropped == 1 and len(tokens) == 152


def test_a_single_message_that_cannot_fit_is_an_error():
    with pytest.raises(RpcError) as info:
        fit_to_context([ChatMessage("user", " ".join(["u"] * 300))], words, 256, 32, {}, "c")
    assert info.value.code == ErrorCode.CONTEXT_OVERFLOW and info.value.data["n_ctx"] == 256


@pytest.mark.slow
def test_the_runtime_keeps_answering_a_conversation_longer_than_its_context(starter_model):
    from runtime.client import RuntimeClient

    with RuntimeClient() as client:
        client.initialize("pytest")
        loaded = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256))
        history = [ChatMessage("system", "You are brief.")]
        for i in range(8):
            history += [ChatMessage("user", f"Question {i}: " + "tell me about the weather in a long sentence " * 2), ChatMessage("assistant", "It is sunny and warm today, with a light breeze from the sea. " * 2)]
        history.append(ChatMessage("user", "What did I just ask?"))
        result = client.chat(ChatGenerateParams("long", history, max_tokens=8, temperature=0.0), timeout=180)
        s = result.stats
        assert s.context_dropped_messages > 0 and s.context_dropped_messages % 2 == 0  # whole turns
        assert s.prompt_tokens + reply_room(loaded.n_ctx, 8) <= loaded.n_ctx
        assert result.finish_reason in ("stop", "length") and s.completion_tokens > 0
        # the next turn keeps the same cut, so everything up to the new message comes from the cache
        history += [ChatMessage("assistant", result.text), ChatMessage("user", "Thanks.")]
        nxt = client.chat(ChatGenerateParams("long", history, max_tokens=4, temperature=0.0), timeout=180)
        assert nxt.stats.context_dropped_messages == s.context_dropped_messages
        assert nxt.stats.prompt_tokens_reused >= s.prompt_tokens


@pytest.mark.slow
def test_a_reply_that_fills_the_context_goes_on_without_the_oldest_turns(starter_model):
    from runtime.client import RuntimeClient

    with RuntimeClient() as client:
        client.initialize("pytest")
        loaded = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256))
        history = [ChatMessage("system", "You count.")]
        for i in range(3):
            history += [ChatMessage("user", f"Say the word number {i} in a sentence of twenty words."), ChatMessage("assistant", "Here is a sentence with the word in it, as you asked, twenty words long, more or less, I hope.")]
        history.append(ChatMessage("user", "Write a very long story about a cat."))
        result = client.chat(ChatGenerateParams("fill", history, max_tokens=110, temperature=0.0), timeout=300)
        s = result.stats
        # Before, the reply stopped where the context was full; now older turns made room and it went on.
        assert s.completion_tokens > loaded.n_ctx - s.prompt_tokens, s
        assert s.context_dropped_messages >= 2, s
        assert result.finish_reason in ("stop", "length")
