"""A thinking reply in the window, and Continue under a cut reply: the controller's real path from the runtime link's
line parsing on (chat.delta notifications decoded by RuntimeLink), real Qt widgets offscreen, a real store.

The link is never started here: the reply's request waits in its queue, its deltas arrive as the runtime's lines
would, and its answer through the link's own completion. The same with the real runtime: test_thinking_window.py.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.chat.controller import ChatController, ConversationSettings
from app.chat.widgets.message_view import ChatView
from app.models.session import ModelSession
from app.runtime_link import RuntimeLink
from app.storage import store as st
from app.storage.store import Store
from runtime.protocol import ChatDelta, ChatGenerateResult, GenerationStats, methods
from runtime.protocol.framing import notification_line
from waiting import qt_wait_until


@pytest.fixture
def chat(qtbot, tmp_path):
    link = RuntimeLink(auto_restart=False)  # never started: requests wait in its queue
    controller = ChatController(Store(tmp_path / "c.sqlite3"), link, ModelSession(link))
    controller.default_settings = ConversationSettings(temperature=0.0, seed=1)
    yield controller
    link.close()


def open_view(qtbot, chat: ChatController) -> ChatView:
    view = ChatView(chat.messages)
    view.set_thinking_expanded(chat.thinking_expanded())
    view.sig_thinking_expanded_changed.connect(chat.set_thinking_expanded)
    view.sig_continue_requested.connect(chat.continue_reply)
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    return view


def request(chat: ChatController):
    """The reply's request, as the link holds it."""
    return next(call for call in chat.runtime_link._queue if call.method == methods.CHAT_GENERATE)


def stream(chat: ChatController, text: str = "", reasoning: str = "") -> None:
    """A chat.delta line from the runtime, parsed and routed by the link as any other."""
    call = request(chat)
    chat.runtime_link._on_line(notification_line(methods.CHAT_DELTA.name, ChatDelta(call.id, call.params.conversation_id, text, reasoning)))


def finish(chat: ChatController, text: str, reasoning: str = "", reason: str = "stop", **stats) -> None:
    call = request(chat)
    chat.runtime_link._queue.remove(call)
    result = ChatGenerateResult(call.id, call.params.conversation_id, text, reason, GenerationStats(completion_tokens=5, decode_tokens_per_s=50.0, **stats), reasoning=reasoning)
    chat.runtime_link._finish(call, result=result)


def last_widget(view: ChatView):
    return view.widgets[-1]


def shown(part) -> bool:
    """Shown within its message (a message added a moment ago becomes visible itself at the next event loop turn)."""
    return not part.isHidden()


def test_a_thinking_reply_folds_its_thinking_above_the_answer(qtbot, chat):
    view = open_view(qtbot, chat)
    assert chat.send("What is 2 + 2?")
    stream(chat, reasoning="Two and two")
    stream(chat, reasoning=" make four.")
    widget = qt_wait_until(lambda: last_widget(view) if last_widget(view).thinking.reasoning == "Two and two make four." else None, 5, "the thinking shown")
    assert widget.thinking.isVisible() and widget.thinking.toggle.text() == "Thinking…"
    assert not widget.thinking.body.isVisible()  # folded by default
    assert not widget.body.isVisible()  # no answer yet: no "…" placeholder under the thinking
    stream(chat, text="4")
    qt_wait_until(lambda: widget.thinking.toggle.text().startswith("Thought for"), 5, "the caption once the answer begins")
    assert widget.body.isVisible()
    finish(chat, "4", reasoning="Two and two make four.", reasoning_tokens=6, answer_tokens=1, thinking_ms=12_400.0, ttfat_ms=12_900.0)
    assert widget.thinking.toggle.text() == "Thought for 12 s"
    reply = chat.store.messages(chat.current.id)[-1]
    assert (reply.content, reply.reasoning, reply.thinking_ms, reply.state) == ("4", "Two and two make four.", 12_400.0, st.COMPLETE)
    assert reply.record.stats.reasoning_tokens == 6
    # Copy copies the answer alone.
    qtbot.mouseClick(widget.buttons["copy"], Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "4"
    # Unfolded by the user: shown, and remembered for the replies shown after it.
    assert not chat.thinking_expanded()
    qtbot.mouseClick(widget.thinking.toggle, Qt.MouseButton.LeftButton)
    assert widget.thinking.body.isVisible() and widget.thinking.body.text == "Two and two make four."
    assert chat.thinking_expanded() and chat.store.get_state("thinking_expanded") == "1"
    again = open_view(qtbot, chat)
    assert last_widget(again).thinking.expanded and last_widget(again).thinking.body.isVisible()
    # The next turn sends the reply's reasoning apart from its answer (the runtime gives it to templates that want it).
    assert chat.send("And 3 + 3?")
    sent = request(chat).params.messages
    assert [(m.role, m.content, m.reasoning) for m in sent] == [
        ("user", "What is 2 + 2?", ""), ("assistant", "4", "Two and two make four."), ("user", "And 3 + 3?", "")]


def test_a_reply_cut_by_its_length_says_so_and_continue_extends_it_in_place(qtbot, chat):
    chat.default_settings = ConversationSettings(temperature=0.0, seed=1, max_tokens=5)
    view = open_view(qtbot, chat)
    assert chat.send("Tell me a story")
    stream(chat, text="Once upon")
    finish(chat, "Once upon", reason="length")
    widget = last_widget(view)
    assert shown(widget.cut) and shown(widget.continue_button)
    assert widget.cut_note.text() == "The reply was cut at its length limit."
    assert chat.can_continue()
    qtbot.mouseClick(widget.continue_button, Qt.MouseButton.LeftButton)
    params = request(chat).params
    assert params.continue_reply and params.max_tokens == 5
    assert (params.messages[-1].role, params.messages[-1].content) == ("assistant", "Once upon")
    assert chat.generating and not shown(widget.continue_button)
    stream(chat, text=" a time")
    qt_wait_until(lambda: chat.messages.messages[-1].content == "Once upon a time", 5, "the continued text in the same message")
    finish(chat, " a time, there was", reason="stop")
    messages = chat.store.messages(chat.current.id)
    assert [(m.role, m.content, m.state) for m in messages] == [("user", "Tell me a story", st.COMPLETE), ("assistant", "Once upon a time, there was", st.COMPLETE)]
    assert not shown(widget.cut)


def test_a_reply_cut_by_a_full_context_says_that(qtbot, chat):
    view = open_view(qtbot, chat)
    assert chat.send("Go on forever")
    finish(chat, "and on and on", reason="length", context_full=True)
    assert last_widget(view).cut_note.text() == "The reply was cut: the context is full."


def test_the_default_reply_length_is_until_the_model_stops(chat):
    assert ConversationSettings().max_tokens is None
    assert chat.send("Hi")
    assert request(chat).params.max_tokens is None


@pytest.mark.parametrize("thinking, budget, sent", [
    (None, None, (None, None)), ("on", None, (True, None)), ("on", 256, (True, 256)), ("off", 256, (False, 0)),
])
def test_the_thinking_setting_is_sent_as_enable_thinking_and_a_budget(chat, thinking, budget, sent):
    chat.default_settings = ConversationSettings(thinking=thinking, reasoning_budget=budget)
    assert chat.send("Hi")
    params = request(chat).params
    assert (params.enable_thinking, params.reasoning_budget) == sent


def test_the_settings_dialog_offers_until_the_model_stops_and_thinking_on_off_or_a_budget(qtbot):
    from app.chat.widgets.settings_dialog import ConversationSettingsDialog

    dialog = ConversationSettingsDialog("", ConversationSettings())
    qtbot.addWidget(dialog)
    assert dialog.max_tokens.text() == "Until the model stops" and dialog.thinking.currentText() == "The model's default"
    _prompt, settings = dialog.result_settings()
    assert (settings.max_tokens, settings.thinking, settings.reasoning_budget) == (None, None, None)
    dialog.thinking.setCurrentIndex(dialog.thinking.findData("on"))
    dialog.reasoning_budget.setValue(512)
    dialog.max_tokens.setValue(2048)
    _prompt, settings = dialog.result_settings()
    assert (settings.max_tokens, settings.thinking, settings.reasoning_budget) == (2048, "on", 512)
    assert settings.thinking_params() == {"enable_thinking": True, "reasoning_budget": 512}
    dialog.thinking.setCurrentIndex(dialog.thinking.findData("off"))
    assert not dialog.reasoning_budget.isEnabled()  # no thinking: no budget to set
    again = ConversationSettingsDialog("", dialog.result_settings()[1])
    qtbot.addWidget(again)
    assert again.thinking.currentData() == "off" and again.max_tokens.value() == 2048 and not again.reasoning_budget.isEnabled()
