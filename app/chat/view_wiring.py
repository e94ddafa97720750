"""The chat view's requests to the controller, and the controller's to the view: what a reply's widgets offer
(regenerate, Continue, thinking folded or not, earlier messages, branches) and a search's hit scrolled to; and
what an empty conversation's welcome says; the count under the message box."""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QObject

from app.chat.controller import ChatController
from app.chat.message_meter import MessageMeter
from app.chat.widgets.composer import Composer
from app.chat.widgets.message_view import ChatView
from app.chat.widgets.welcome import Welcome
from app.models.session import ModelSession
from app.models.starter import is_starter
from app.models.startup import StartupModel
from app.runtime_link import RuntimeLink


def wire_chat_view(view: ChatView, chat: ChatController) -> None:
    view.sig_regenerate_requested.connect(chat.regenerate)
    view.sig_continue_requested.connect(chat.continue_reply)
    view.set_thinking_expanded(chat.thinking_expanded())
    view.sig_thinking_expanded_changed.connect(chat.set_thinking_expanded)
    view.sig_show_earlier.connect(chat.show_earlier)
    view.sig_branch_requested.connect(chat.switch_branch)
    view.sig_delete_branch_requested.connect(chat.delete_branch)
    chat.sig_revealed.connect(lambda message_id, words: view.reveal_row(view.model.row_of_id(message_id), words))  # a search's hit, in its branch


def make_message_meter(link: RuntimeLink, composer: Composer, chat: ChatController, session: ModelSession, parent: QObject) -> MessageMeter:
    """The count under the message box: of the box's text, against the conversation on screen, while the loaded model writes the
    replies and none is decoding (bench/count_tokens.py: a count every 300 ms slowed a reply decoding beside it to 0.965x on two
    cores); a reply's end counts again."""
    return MessageMeter(link, composer.text, lambda: chat.messages.messages, lambda: chat.settings().max_tokens,
                        lambda: chat.local_replies and session.loaded is not None and not chat.any_generating, parent)


def wire_message_meter(meter: MessageMeter, composer: Composer, chat: ChatController, session: ModelSession) -> None:
    composer.edit.textChanged.connect(meter.text_changed)
    meter.sig_changed.connect(composer.show_meter)
    # What the count is measured against changed: the conversation, where replies come from, its path, a reply's end, the model.
    for changed in (chat.sig_current_changed, chat.sig_reply_link_changed, chat.sig_path_changed, chat.sig_generating_changed, session.sig_loaded):
        changed.connect(lambda *_args: meter.refresh())


def wire_welcome(welcome: Welcome, session: ModelSession, startup: StartupModel, chat: ChatController, composer: Composer,
                 browse: Callable[[], object]) -> None:
    """The welcome of an empty conversation follows the model replies come from; its questions go to the message box."""

    def show() -> None:
        info = session.loaded
        if not chat.local_replies:
            welcome.show_remote(chat.reply_model_name)
        elif session.loading is not None:
            welcome.show_loading(os.path.basename(session.loading.path))
        elif info is None:
            welcome.show_no_model()
        else:
            welcome.show_model(session.display_name, info.quantization, info.n_gpu_layers > 0, is_starter(info.path))

    for signal in (session.sig_loading, session.sig_loaded, session.sig_failed, session.link.sig_crashed, chat.sig_reply_link_changed,
                   startup.sig_fetch_ended, startup.sig_failed):
        signal.connect(lambda *_args: show())
    startup.sig_status.connect(welcome.show_fetching)
    welcome.sig_example_chosen.connect(composer.propose)
    welcome.sig_browse_models.connect(browse)
    show()
