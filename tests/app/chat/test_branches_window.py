"""Branches through the real window and the real runtime: ◀ n/m ▶ switches, and a switch back to an
earlier branch is restored from the KV store, not evaluated again (#32)."""

from __future__ import annotations

import pytest

from app.chat.controller import ConversationSettings
from waiting import qt_wait_until

# Five replies through the real runtime: minutes on a shared machine (the default is 300 s a test).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SYSTEM = (
    "You are a patient guide to the natural world. You answer questions about animals, plants and weather "
    "in plain words, with one or two concrete details, and you never refuse a question about nature."
)


def settings(seed: int) -> ConversationSettings:
    return ConversationSettings(temperature=0.9, max_tokens=48, n_ctx=2048, seed=seed)


def bar(window, row):
    return window.chat_view.widgets[row].branch_bar


def test_switching_back_to_an_earlier_branch_restores_it_from_the_kv_store(window):
    chat = window.chat
    chat.new_conversation()
    chat.set_settings(SYSTEM, settings(1))
    chat.send("Describe an animal of the forest in detail.")
    qt_wait_until(lambda: not chat.any_generating, 240, "the reply")
    first = chat.messages.messages[1]
    chat.set_settings(SYSTEM, settings(2))
    assert chat.regenerate()
    qt_wait_until(lambda: not chat.any_generating, 240, "the reply")
    second = chat.messages.messages[1]
    assert second.id != first.id and second.content != first.content
    assert bar(window, 1).isVisible() and bar(window, 1).label.text() == "2/2"
    chat.send("Describe another one.")
    qt_wait_until(lambda: not chat.any_generating, 240, "the reply")
    assert chat.messages.rowCount() == 4

    # ◀ shows the first reply again, and the path under it (nothing: it was a leaf).
    bar(window, 1).previous.click()
    assert [m.id for m in chat.messages.messages] == [chat.messages.messages[0].id, first.id]
    assert bar(window, 1).label.text() == "1/2"
    chat.send("Why does it live there?")
    qt_wait_until(lambda: not chat.any_generating, 240, "the reply")
    on_first = chat.messages.messages[-1].record.stats
    assert on_first.prompt_tokens_evaluated < on_first.prompt_tokens_reused + on_first.prompt_tokens_restored

    # ▶ goes back to the second branch, with its newest path: four messages.
    bar(window, 1).next.click()
    assert [m.id for m in chat.messages.messages[:2]] == [chat.messages.messages[0].id, second.id] and chat.messages.rowCount() == 4
    chat.send("Thank you.")
    qt_wait_until(lambda: not chat.any_generating, 240, "the reply")
    stats = chat.messages.messages[-1].record.stats
    # The live cache held the first branch (it shares only the system prompt and the question); the KV store
    # held this one: it was restored, and only the new turn was evaluated.
    assert stats.prompt_tokens_restored > 0 and stats.kv_restore_source in ("ram", "disk")
    assert stats.prompt_tokens_evaluated <= 16 < stats.prompt_tokens_restored, stats
    assert window.metrics_panel.value_of("restored") is not None
    # The keyboard does what the arrows do: Alt+Left shows the first reply again.
    assert chat.switch_last_branch(-1) and chat.messages.message(1).id == first.id
