"""The conversation view over a long conversation: widgets built newest first, a few per turn of the event
loop, and kept in step with the model whatever changes meanwhile (issue #33). The real widgets, offscreen."""

from __future__ import annotations

import pytest

from app.chat.message_model import MessageListModel
from app.chat.widgets.message_view import ChatView
from app.storage.store import Message


def messages(first: int, last: int) -> list[Message]:
    return [Message(i, "c", i, "user" if i % 2 == 0 else "assistant", f"message {i}", depth=i) for i in range(first, last)]


@pytest.fixture
def view(qtbot):
    model = MessageListModel()
    widget = ChatView(model)
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    return widget


def shown(view: ChatView) -> list[str]:
    return [w.message.content for w in view.widgets]


def in_step(view: ChatView) -> bool:
    return shown(view) == [m.content for m in view.model.messages]


def test_the_newest_messages_come_first_and_the_rest_follow(qtbot, view):
    view.model.set_messages(messages(1_000, 1_300))
    assert 0 < len(view.widgets) < 300 and shown(view)[-1] == "message 1299"  # the newest, at once
    assert not view.earlier.isVisible()  # not before every widget is there
    qtbot.waitUntil(lambda: in_step(view), timeout=60_000)
    assert view.earlier.isVisible()  # position 1000 is not the conversation's first
    view.model.prepend(messages(900, 1_000))
    qtbot.waitUntil(lambda: in_step(view), timeout=60_000)
    assert shown(view)[0] == "message 900"


def test_rows_removed_while_older_ones_are_still_being_built_leave_the_view_in_step(qtbot, view):
    view.model.set_messages(messages(0, 300))
    assert len(view.widgets) < 300
    view.model.truncate(5)  # rows without widgets yet and rows with them go together
    qtbot.waitUntil(lambda: in_step(view), timeout=60_000)
    assert shown(view) == [f"message {i}" for i in range(5)] and not view.earlier.isVisible()
    view.model.append(messages(5, 6)[0])
    assert in_step(view) and view.follow
