"""A conversation longer than the context goes on: the oldest turns are left out, and the result says so."""

import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.engine.context_window import FitCancelled, fit_to_context, reply_room
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
        fit_to_context([ChatMessage("user", " ".join(["u"] * 300))], words, 256, 32, {}, "c", n_ctx_train=8192)
    assert info.value.code == ErrorCode.CONTEXT_OVERFLOW and info.value.data == {"prompt_tokens": 302, "n_ctx": 256, "n_ctx_train": 8192}  # 300 words and the two ends of a turn


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


# ---- a crafted conversation of very many messages (issue #13) ------------------------------------------


def reference_fit(messages, render, n_ctx, max_tokens, remembered=0, committed=0):
    """The policy as first written, one render per possible cut: what the fast search must agree with."""
    room = reply_room(n_ctx, max_tokens) + committed
    lead = 0
    while lead < len(messages) - 1 and messages[lead].role == "system":
        lead += 1
    system, history = messages[:lead], messages[lead:]
    cut_points = [d for d in range(1, len(history)) if history[d].role == "user" or d == len(history) - 1]
    if remembered not in cut_points:
        remembered = 0
    if len(render(system + history[remembered:])) + room <= n_ctx:
        return remembered
    best = None
    for d in cut_points:
        if d <= remembered:
            continue
        n = len(render(system + history[d:]))
        if n + room <= 0.75 * n_ctx:
            return d
        if n + committed < n_ctx:
            best = d
    if best is not None:
        return best
    if len(render(history[-1:])) + committed < n_ctx:
        return len(messages) - 1
    return "overflow"


@given(
    lengths=st.lists(st.integers(0, 40), min_size=1, max_size=60),
    system=st.booleans(),
    n_ctx=st.integers(64, 400),
    max_tokens=st.integers(1, 64),
    remembered=st.integers(0, 30),
    committed=st.integers(0, 40),
)
@settings(max_examples=300, deadline=None)
def test_the_fast_search_leaves_out_what_one_render_per_cut_would(lengths, system, n_ctx, max_tokens, remembered, committed):
    messages = [ChatMessage("system", "be brief")] if system else []
    messages += [ChatMessage("user" if i % 2 == 0 else "assistant", " ".join(["w"] * n)) for i, n in enumerate(lengths)]
    expected = reference_fit(messages, words, n_ctx, max_tokens, remembered, committed)
    cuts = {"c": remembered} if remembered else {}
    try:
        _tokens, dropped = fit_to_context(messages, words, n_ctx, max_tokens, cuts, "c", committed)
    except RpcError as exc:
        assert exc.code == ErrorCode.CONTEXT_OVERFLOW and expected == "overflow"
        return
    assert dropped == expected


def test_finding_the_cut_takes_a_few_renders_of_about_the_part_kept():
    messages = conversation(49_999)  # 100,000 messages: the most accepted
    sizes = []
    _tokens, dropped = fit_to_context(messages, lambda m: sizes.append(len(m)) or words(m), 256, 32, {}, "c")
    kept = len(messages) - dropped
    assert len(sizes) <= 2 * math.log2(len(messages)) + 4, len(sizes)
    assert max(sizes) <= 4 * kept, (max(sizes), kept)  # never the whole history


def test_the_fit_looks_at_cancel_before_each_render():
    cancel = threading.Event()
    renders = []

    def render(messages):
        renders.append(len(messages))
        if len(renders) == 3:
            cancel.set()  # as chat.cancel would, while the engine is fitting
        return words(messages)

    with pytest.raises(FitCancelled):
        fit_to_context(conversation(49_999), render, 256, 32, {}, "c", cancel=cancel)
    assert len(renders) == 3


def test_too_many_messages_or_too_much_text_is_refused_before_any_render():
    from runtime.engine import context_window

    def never(_messages):
        raise AssertionError("rendered a conversation that is refused")

    many = [ChatMessage("user", "hi")] * (context_window.MAX_MESSAGES + 1)
    with pytest.raises(RpcError) as info:
        fit_to_context(many, never, 256, 32, {}, "c")
    assert info.value.code == ErrorCode.INVALID_PARAMS and str(context_window.MAX_MESSAGES) in info.value.message
    huge = [ChatMessage("user", "x" * (context_window.MAX_CONVERSATION_CHARS // 2 + 1))] * 2
    with pytest.raises(RpcError) as info:
        fit_to_context(huge, never, 256, 32, {}, "c")
    assert info.value.code == ErrorCode.INVALID_PARAMS and "characters" in info.value.message


def tiny_messages(n):
    return [ChatMessage("user" if i % 2 == 0 else "assistant", "hi") for i in range(n - 1)] + [ChatMessage("user", "Say hello.")]


@pytest.fixture(scope="module")
def small_context(starter_model):
    from runtime.client import RuntimeClient

    with RuntimeClient() as client:
        client.initialize("pytest")
        client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512))
        yield client


@pytest.mark.slow
def test_a_hundred_thousand_tiny_messages_are_answered_within_seconds(small_context):
    # max_tokens 0: the answer is the fitted prompt, so the bound is on the fitting (and the protocol), not on decoding.
    many = tiny_messages(99_998)  # and two more next turn: the most accepted
    result = small_context.chat(ChatGenerateParams("many", many, max_tokens=0), timeout=30)
    s = result.stats
    assert s.context_dropped_messages > 99_000 and s.prompt_tokens <= 0.75 * 512, s
    # The next turn keeps the cut: again within seconds.
    result = small_context.chat(ChatGenerateParams("many", many + [ChatMessage("assistant", "Hello."), ChatMessage("user", "Again.")], max_tokens=0), timeout=30)
    assert result.stats.context_dropped_messages == s.context_dropped_messages


@pytest.mark.slow
def test_a_cancel_lands_while_a_hundred_thousand_messages_are_fitted(small_context):
    call, wait = small_context.generate(ChatGenerateParams("many-cancelled", tiny_messages(100_000), max_tokens=64, temperature=0.0))
    assert small_context.cancel(call.id)
    assert wait(30).finish_reason == "cancelled"
    # and the engine is free again
    assert small_context.chat(ChatGenerateParams("after", [ChatMessage("user", "Hi")], max_tokens=1), timeout=120).finish_reason in ("stop", "length")


@pytest.mark.slow
def test_too_many_messages_are_refused_by_the_runtime(small_context):
    from runtime.engine.context_window import MAX_MESSAGES

    with pytest.raises(RpcError) as info:
        small_context.chat(ChatGenerateParams("too-many", tiny_messages(MAX_MESSAGES + 1), max_tokens=1), timeout=30)
    assert info.value.code == ErrorCode.INVALID_PARAMS and "messages" in info.value.message


# ---- the fit from the newest turns backwards (issue #33) ------------------------------------------------


def lean(messages):
    """A tokenizer under which an empty message costs nothing: more messages than n_ctx can still fit."""
    return [0] + [0 for m in messages for _ in m.content.split()]


@given(
    lengths=st.lists(st.integers(0, 3), min_size=1, max_size=400),
    empty_share=st.integers(0, 4),
    system=st.booleans(),
    n_ctx=st.integers(16, 200),
    max_tokens=st.integers(1, 16),
    remembered=st.integers(0, 300),
    committed=st.integers(0, 20),
)
@settings(max_examples=300, deadline=None)
def test_the_fit_from_the_newest_turns_leaves_out_what_one_render_per_cut_would(lengths, empty_share, system, n_ctx, max_tokens, remembered, committed):
    """Conversations with more messages than n_ctx tokens: the fit starts from the newest turns, and must
    still agree with the policy, also where empty messages make the whole fit after all."""
    messages = [ChatMessage("system", "be brief")] if system else []
    messages += [ChatMessage("user" if i % 2 == 0 else "assistant", "" if empty_share and i % (empty_share + 1) else " ".join(["w"] * n)) for i, n in enumerate(lengths)]
    for tokenizer in (words, lean):
        expected = reference_fit(messages, tokenizer, n_ctx, max_tokens, remembered, committed)
        cuts = {"c": remembered} if remembered else {}
        try:
            _tokens, dropped = fit_to_context(messages, tokenizer, n_ctx, max_tokens, cuts, "c", committed)
        except RpcError as exc:
            assert exc.code == ErrorCode.CONTEXT_OVERFLOW and expected == "overflow"
            continue
        assert dropped == expected


@pytest.mark.parametrize("n_messages", [20_000, 50_000, 100_000])
def test_the_fit_never_renders_the_turns_it_leaves_out_far_behind(n_messages):
    """Its cost is set by the context, not by the conversation: one-letter messages (issue #33's request,
    whose text is far below n_ctx x MAX_CHARS_PER_TOKEN) get the same renders at 20,000 and 100,000
    messages, none reaching further back than a few times what is kept."""
    messages = [ChatMessage("user" if i % 2 == 0 else "assistant", "a") for i in range(n_messages - 1)] + [ChatMessage("user", "last")]
    sizes = []
    _tokens, dropped = fit_to_context(messages, lambda m: sizes.append(len(m)) or words(m), 4096, 64, {}, "c")
    kept = len(messages) - dropped
    assert 1000 < kept < 4096
    assert max(sizes) <= 4 * kept, (max(sizes), kept)
    assert sum(sizes) <= 3 * kept * math.log2(kept), (sum(sizes), kept)
    assert sizes == RENDERS.setdefault("sizes", sizes)  # the same renders whatever the length


RENDERS: dict = {}
