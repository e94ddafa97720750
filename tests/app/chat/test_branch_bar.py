"""◀ n/m ▶ under a message with siblings, in the real view offscreen (the branch switch itself: test_branches_window.py)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QWidget

from app.chat.message_model import MessageListModel
from app.chat.widgets.message_view import ChatView, MessageWidget
from app.storage.store import Message


@pytest.fixture
def view(qtbot):
    widget = ChatView(MessageListModel())
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    return widget


def reply(message_id: int, branch: int, branches: int) -> Message:
    return Message(message_id, "c", message_id, "assistant", f"reply {message_id}", parent_id=1, depth=1, branch=branch, branches=branches)


def test_the_bar_shows_which_branch_and_its_arrows_ask_for_the_others(view):
    view.model.set_messages([Message(1, "c", 0, "user", "q"), reply(3, 2, 3)])
    first, second = view.widgets
    assert first.branch_bar is None  # no siblings: no bar
    bar = second.branch_bar
    assert bar is not None and not bar.isHidden() and bar.label.text() == "2/3"
    assert bar.previous.isEnabled() and bar.next.isEnabled()
    asked: list[tuple[int, int]] = []
    view.sig_branch_requested.connect(lambda row, step: asked.append((row, step)))
    deletes: list[int] = []
    view.sig_delete_branch_requested.connect(deletes.append)
    bar.previous.click()
    bar.next.click()
    bar.delete.click()
    assert asked == [(1, -1), (1, 1)] and deletes == [1]
    view.set_generating(True)  # a reply streams: the path on screen must not change under it
    assert not bar.previous.isEnabled() and not bar.delete.isEnabled()


def test_a_branch_shown_in_place_of_another_leaves_no_stale_widget(view):
    view.model.set_messages([Message(1, "c", 0, "user", "q"), reply(3, 3, 3)])
    view.model.replace_from(1, [reply(2, 2, 3)])
    # Until the event loop's next turn deletes the old widget (processEvents() runs the queued shows, not the
    # deferred deletes), only the new branch is visible: a grab of the window (the README's screenshot) had both.
    QApplication.processEvents()
    visible = [w for w in view.widget().findChildren(QWidget) if isinstance(w, MessageWidget) and w.isVisibleTo(view)]
    assert [w.message.content for w in visible] == ["q", "reply 2"]
    assert visible[1].branch_bar.label.text() == "2/3" and visible[1].branch_bar.next.isEnabled()
