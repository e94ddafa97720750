"""The chat view's requests to the controller, and the controller's to the view: what a reply's widgets offer
(regenerate, Continue, thinking folded or not, earlier messages, branches) and a search's hit scrolled to."""

from __future__ import annotations

from app.chat.controller import ChatController
from app.chat.widgets.message_view import ChatView


def wire_chat_view(view: ChatView, chat: ChatController) -> None:
    view.sig_regenerate_requested.connect(chat.regenerate)
    view.sig_continue_requested.connect(chat.continue_reply)
    view.set_thinking_expanded(chat.thinking_expanded())
    view.sig_thinking_expanded_changed.connect(chat.set_thinking_expanded)
    view.sig_show_earlier.connect(chat.show_earlier)
    view.sig_branch_requested.connect(chat.switch_branch)
    view.sig_delete_branch_requested.connect(chat.delete_branch)
    chat.sig_revealed.connect(lambda message_id, words: view.reveal_row(view.model.row_of_id(message_id), words))  # a search's hit, in its branch
