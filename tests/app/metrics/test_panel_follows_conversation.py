"""The metrics panel follows the conversation on screen, through the real window and runtime.

Seen in the window: with two replies streaming, the panel showed the newest one's figures (the
other conversation's prompt, 40 tokens, 24 reused) while the user read the older one.
"""

from __future__ import annotations

import pytest

from app.chat.controller import ConversationSettings
from app.metrics import figures
from window_helpers import wait_reply

pytestmark = pytest.mark.slow

LONG = ConversationSettings(temperature=0.8, max_tokens=1500, n_ctx=2048, seed=3)
SHORT_PROMPT = "Write a very long essay about the sea."
LONG_PROMPT = "Write a very long essay about mountains. " + "Mention their rivers, their forests, their snow and their villages. " * 6


def test_while_two_replies_stream_the_panel_shows_the_one_on_screen(qtbot, window, english):
    window.chat.default_settings = LONG
    older = window.chat.new_conversation()
    window.chat.send(SHORT_PROMPT)
    qtbot.waitUntil(lambda: older.id in window.chat.replies and bool(window.chat.replies[older.id].text), timeout=120_000)
    newer = window.chat.new_conversation()
    window.chat.send(LONG_PROMPT)
    qtbot.waitUntil(lambda: newer.id in window.chat.replies and bool(window.chat.replies[newer.id].text), timeout=120_000)

    seen: list[tuple[int, str | None]] = []  # (the sample's prompt tokens, the panel's prompt row) while both stream

    def on_sample(metrics) -> None:  # connected after the panel: it has rendered the sample already
        if metrics.generation is not None and {older.id, newer.id} <= set(window.chat.replies):
            seen.append((metrics.generation.prompt_tokens, window.metrics_panel.value_of("prompt")))

    window.poller.sig_sample.connect(on_sample)
    window.chat.open(older.id)  # back to the older reply, which still streams
    qtbot.waitUntil(lambda: len(seen) >= 3, timeout=60_000)
    assert {older.id, newer.id} <= set(window.chat.replies), "one reply ended before the samples: nothing ran at once"
    window.poller.sig_sample.disconnect(on_sample)
    window.chat.stop()
    window.chat.open(newer.id)
    window.chat.stop()
    wait_reply(qtbot, window, timeout=30_000)

    older_stats = window.store.messages(older.id)[-1].record.stats
    newer_stats = window.store.messages(newer.id)[-1].record.stats
    assert older_stats.prompt_tokens != newer_stats.prompt_tokens
    assert {prompt for prompt, _shown in seen} == {older_stats.prompt_tokens}, "the runtime gave another conversation's figures"
    assert {shown for _prompt, shown in seen} == {figures.tokens(older_stats.prompt_tokens)}

    # Between conversations with no reply streaming: each one's own last figures, not the last reply's.
    window.chat.open(older.id)
    assert window.metrics_panel.value_of("prompt") == figures.tokens(older_stats.prompt_tokens)
    window.chat.open(newer.id)
    assert window.metrics_panel.value_of("prompt") == figures.tokens(newer_stats.prompt_tokens)
    empty = window.chat.new_conversation()
    assert window.metrics_panel.value_of("prompt") == "—" and window.metrics_panel.speed.text() == "—"
    assert empty.id == window.chat.current.id


def test_after_a_branch_switch_the_panel_shows_the_reply_of_the_branch_on_screen(qtbot, window, english):
    # Seen in the window: after ◀ the panel still showed the figures of the reply written last, on the other branch.
    window.chat.default_settings = ConversationSettings(temperature=0.8, max_tokens=4, n_ctx=2048, seed=3)
    window.chat.new_conversation()
    window.chat.send(SHORT_PROMPT)
    wait_reply(qtbot, window, timeout=60_000)
    window.chat.set_settings("", ConversationSettings(temperature=0.8, max_tokens=9, n_ctx=2048, seed=3))
    assert window.chat.regenerate()
    wait_reply(qtbot, window, timeout=60_000)
    first, second = (m.record.stats for m in window.store.siblings(window.chat.last_reply().id))
    assert (first.completion_tokens, second.completion_tokens) == (4, 9), "the essay prompt should run to max_tokens"
    assert window.metrics_panel.value_of("completion") == figures.tokens(9)
    row = window.chat.messages.rowCount() - 1
    assert window.chat.switch_branch(row, -1)
    assert window.metrics_panel.value_of("completion") == figures.tokens(4)
    assert window.chat.switch_branch(row, +1)
    assert window.metrics_panel.value_of("completion") == figures.tokens(9)
