"""A message body (app/chat/widgets/markdown_view.MarkdownView) on screen offscreen, as the chat shows one."""

from __future__ import annotations

from app.chat.widgets.markdown_view import MarkdownView


def shown_markdown(qtbot, text: str, width: int, height: int, streaming: bool = False) -> MarkdownView:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.set_markdown(text, streaming)
    view.show()
    qtbot.waitExposed(view)
    return view
