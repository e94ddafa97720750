"""In the real window, over the real runtime: the message being written is counted with the loaded model's own
tokenizer once the typing pauses, and says before it is sent when it will push the oldest turns out of the context,
or cannot fit at all (then the runtime would refuse it: CONTEXT_OVERFLOW)."""

from __future__ import annotations

import dataclasses

import llama_cpp
import pytest

from app.chat.message_meter import context_used
from app.chat.words import meter_words
from app.runtime_link import RuntimeLink
from app.storage.reply_record import ReplyRecord
from app.storage.store import Message
from runtime.protocol import GenerationStats
from window_helpers import N_CTX, wait_reply

pytestmark = pytest.mark.slow


@pytest.fixture
def window(module_window, english):
    module_window.chat.new_conversation()
    yield module_window
    module_window.composer.edit.clear()


def shown(qtbot, window, text: str) -> tuple[str, bool]:
    """What the meter says of `text` once its count is back (it says nothing while the box is empty)."""
    meter = window.composer.meter
    window.composer.edit.setPlainText("")
    qtbot.waitUntil(lambda: meter.isHidden(), timeout=10_000)
    window.composer.edit.setPlainText(text)
    qtbot.waitUntil(lambda: meter.isVisible(), timeout=30_000)
    return meter.text(), bool(meter.property("warns"))


def test_the_message_is_counted_as_the_model_reads_it_and_only_the_last_text_typed_is_shown(qtbot, window, starter_model):
    vocab = llama_cpp.Llama(str(starter_model), vocab_only=True, verbose=False)
    text = "Selamat pagi! How many tokens is this sentence, with its — dash and 日本語?"
    expected = len(vocab.tokenize(text.encode(), add_bos=False, special=False))
    assert shown(qtbot, window, text) == (f"{expected} tokens", False)
    assert window.composer.meter.accessibleDescription() == f"{expected} tokens"
    # Typed on while a count is on its way: only the count of what the box holds now is shown.
    for typed in ("a", "ab", "abc def"):
        window.composer.edit.setPlainText(typed)
    last = len(vocab.tokenize(b"abc def", add_bos=False, special=False))
    qtbot.waitUntil(lambda: window.composer.meter.text() == f"{last} tokens", timeout=30_000)
    window.composer.edit.clear()
    qtbot.waitUntil(lambda: window.composer.meter.isHidden(), timeout=10_000)


def test_a_message_the_context_cannot_hold_says_so_before_it_is_sent(qtbot, window):
    text, warns = shown(qtbot, window, "The harbour wall was discussed at length by the committee. " * 250)  # some 2,750 tokens
    assert warns and "more than this model's context of 2,048 holds" in text and "Attach it as a file" in text
    window.chat.send("Name a fruit.")
    wait_reply(qtbot, window)
    text, warns = shown(qtbot, window, "Name a vegetable.")
    assert not warns and text.endswith("tokens")


def test_a_message_that_pushes_the_oldest_turns_out_says_so_and_alone_it_would_not(qtbot, window, starter_model):
    window.chat.send("Name a fruit.")
    wait_reply(qtbot, window)
    used = context_used(window.chat.messages.messages)  # the runtime's figures for that turn
    assert used > 20
    vocab = llama_cpp.Llama(str(starter_model), vocab_only=True, verbose=False)
    wanted = N_CTX - 8 - used + 5  # 8: the window's max_tokens here, the room kept for the reply
    words = " cat" * wanted
    while len(vocab.tokenize(words.encode(), add_bos=False, special=False)) > wanted:
        words = words[:-4]
    text, warns = shown(qtbot, window, words)
    assert warns and text.endswith("the oldest messages will be left out of the context to make room"), text
    window.chat.new_conversation()  # nothing said yet: the same message fits (counted again as the conversation changes)
    qtbot.waitUntil(lambda: not window.composer.meter.property("warns"), timeout=30_000)
    assert window.composer.meter.text().endswith("tokens")


def test_replies_from_a_remote_endpoint_are_not_counted_with_the_local_model(qtbot, window):
    remote = RuntimeLink(auto_restart=False)  # stands for a remote endpoint's link: its tokenizer is not the loaded model's
    try:
        assert window.chat.set_reply_link(remote, "gpt-remote")
        window.composer.edit.setPlainText("Hello there")
        qtbot.wait(800)  # past the pause the meter waits for
        assert window.composer.meter.isHidden()
    finally:
        assert window.chat.set_reply_link(None)
        remote.close()
    assert shown(qtbot, window, "Hello there")[0].endswith("tokens")  # the loaded model's replies again: counted


def reply(prompt_tokens: int, completion_tokens: int) -> Message:
    stats = GenerationStats(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    return Message(id=2, conversation_id="c", position=1, role="assistant", content="…", record=ReplyRecord(stats, "stop"))


def test_the_room_left_is_the_last_reply_s_prompt_and_reply_and_the_reply_s_own_room(english):
    question = Message(id=1, conversation_id="c", position=0, role="user", content="?")
    assert context_used([]) == 0 and context_used([question]) == 0
    assert context_used([question, reply(1_200, 300), question]) == 1_500  # the newest reply's figures
    assert meter_words(40, 1_400, N_CTX, None) == ("40 tokens", False)  # 1,400 + 40 + 512 for the reply fits 2,048
    assert meter_words(40, 1_400, N_CTX, 1_024) == ("40 tokens", False)  # the reply's room is min(max_tokens, n_ctx / 4): still 512
    text, warns = meter_words(200, 1_400, N_CTX, None)  # 1,400 + 200 + 512 does not
    assert warns and text == "200 tokens: the oldest messages will be left out of the context to make room"
    assert meter_words(200, 1_400, N_CTX, 100) == ("200 tokens", False)  # a short reply needs less room
    text, warns = meter_words(1_537, 0, N_CTX, None)  # 1,537 + 512 > 2,048: not even alone
    assert warns and text.startswith("1,537 tokens: more than this model's context of 2,048 holds")
    assert meter_words(1, 0, N_CTX, None) == ("1 token", False)


def test_nothing_is_counted_while_a_reply_decodes_and_its_end_counts_again(qtbot, module_window, english):
    """A count takes a core from a decoding reply's steps (bench/count_tokens.py): the meter waits for the reply's end."""
    window = module_window
    window.chat.default_settings = dataclasses.replace(window.chat.default_settings, max_tokens=400)
    try:
        window.chat.new_conversation()
        window.chat.send("Write a long story about a lighthouse keeper and her cat.")
        window.composer.edit.setPlainText("And now backwards?")
        qtbot.wait(700)  # past the pause the meter waits for
        assert window.chat.generating, "the reply ended too soon for this test: ask for a longer one"
        assert window.composer.meter.isHidden()
        window.chat.stop()  # its end, stopped or not, counts again
        wait_reply(qtbot, window)
        qtbot.waitUntil(lambda: window.composer.meter.isVisible(), timeout=30_000)
        assert window.composer.meter.text().endswith("tokens")
    finally:
        window.chat.default_settings = dataclasses.replace(window.chat.default_settings, max_tokens=8)
        window.composer.edit.clear()
