"""A conversation opened is laid out once, at the width the chat's scroll bar leaves it, and the bar shows where it
did before: never for a conversation that fits (app/chat/widgets/scroll_bar_first.py). The real widgets, offscreen."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QWidget

from app.chat.message_model import MessageListModel
from app.chat.widgets.markdown_view import AutoHeightBrowser
from app.chat.widgets.message_view import ChatView
from app.storage.store import Message

SECTION = """## Step {i}

Read the file for step {i}:

1. Open it.
2. Sum the column.

```python
total = sum(float(row["amount"]) for row in rows_{i})
```

| Approach | Good for |
|---|---|
| `csv` | small files |

Check the result before step {i}."""


def conversation(reply: str) -> list[Message]:
    return [Message(1, "c", 1, "user", "Sum the amounts."), Message(2, "c", 2, "assistant", reply)]


class Seen(QObject):
    """Which widgets of a class received an event of one type, and the widths it gave them (the widget's own for
    an event without a size)."""

    def __init__(self, kind: QEvent.Type, widget_class: type[QWidget]):
        super().__init__()
        self.kind, self.widget_class = kind, widget_class
        self.widths: dict[QWidget, list[int]] = {}

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == self.kind and isinstance(watched, self.widget_class):
            width = event.size().width() if isinstance(event, QResizeEvent) else watched.width()
            self.widths.setdefault(watched, []).append(width)
        return False


@pytest.fixture
def chat(qtbot):
    view = ChatView(MessageListModel())
    qtbot.addWidget(view)
    view.resize(700, 500)  # narrower than the column's maximum: the bar's width is the column's
    view.show()
    qtbot.waitExposed(view)
    return view


def text_views(view: ChatView) -> list[AutoHeightBrowser]:
    return view.widgets[-1].body.findChildren(AutoHeightBrowser)


def test_a_long_reply_opened_lays_out_each_text_view_once_at_the_width_the_scroll_bar_leaves(qapp, chat):
    resizes = Seen(QEvent.Type.Resize, AutoHeightBrowser)
    qapp.installEventFilter(resizes)
    try:
        chat.model.set_messages(conversation("\n\n".join(SECTION.format(i=i) for i in range(12))))
        qapp.processEvents()
    finally:
        qapp.removeEventFilter(resizes)
    assert chat.verticalScrollBar().isVisible()
    views = text_views(chat)
    assert len(views) == 12 * 3 + 1  # prose, code, table a section; the last prose alone
    for view in views:  # resized only to the width it keeps (and to its text's height): its text laid out once
        assert set(resizes.widths[view]) == {view.width()}


def test_a_conversation_that_fits_opens_without_the_scroll_bar_ever_painted(qtbot, qapp, chat):
    painted = Seen(QEvent.Type.Paint, QWidget)
    qapp.installEventFilter(painted)
    try:
        chat.model.set_messages(conversation("A short answer."))
        (view,) = text_views(chat)
        qtbot.waitUntil(lambda: view.viewport() in painted.widths)  # the window has painted the reply
    finally:
        qapp.removeEventFilter(painted)
    assert not chat.verticalScrollBar().isVisible() and chat.verticalScrollBar() not in painted.widths
    assert chat.viewport().width() == chat.width()  # none of it kept for the bar


def one_line_only_at(wider: int, narrower: int) -> str:
    """A paragraph one line tall in a text view `wider` pixels wide, two lines in one `narrower`."""
    probe = AutoHeightBrowser()
    document = probe.document()

    def height(text: str, width: int) -> float:
        probe.setMarkdown(text)
        document.setTextWidth(width)
        return document.size().height()

    for length in range(1, 2_000):
        text = "a" * length
        if height(text, narrower) > height(text, wider):
            return text
    raise AssertionError("no paragraph wraps at the one width only")


def test_a_conversation_that_fits_only_without_the_scroll_bar_opens_without_it(qapp, chat):
    """Taller than the chat at the width the bar leaves, it fits at the full width: no bar, as before."""
    chat.resize(700, 2_000)
    chat.model.set_messages(conversation("a"))
    (view,) = text_views(chat)
    wider = view.width()
    narrower = wider - chat.verticalScrollBar().sizeHint().width()
    messages = conversation(one_line_only_at(wider, narrower))
    chat.model.set_messages(messages)
    for _turn in range(10):  # the layouts above the reply take its one line's height, a level a turn
        qapp.processEvents()
    fits = chat.widget().minimumSizeHint().height()
    chat.resize(700, fits)  # exactly as tall as the conversation at the full width
    chat.model.set_messages([])
    chat.model.set_messages(messages)
    (view,) = text_views(chat)
    assert not chat.verticalScrollBar().isVisible() and view.width() == wider
    assert view.document().size().height() < 2 * view.fontMetrics().lineSpacing()  # one line
