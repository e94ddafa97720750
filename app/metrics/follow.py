"""The metrics panel follows the conversation on screen: the reply streaming in it now, else its last
reply's figures as they were stored, never another conversation's.

The runtime's own figures (context, memory, KV cache) are polled while one of its replies streams on
screen, and once when a reply ends or the conversation changes. A remote endpoint's reply brings its
figures with it: the runtime knows nothing of it, so nothing is polled for it.
"""

from __future__ import annotations

from typing import Callable, Protocol

from app.metrics.panel import MetricsPanel
from app.metrics.poller import MetricsPoller
from app.storage.store import Conversation, Message


class ChatOnScreen(Protocol):
    """What the panel reads of the chat (app/chat/controller.py ChatController)."""

    @property
    def generating(self) -> bool: ...

    @property
    def local_replies(self) -> bool: ...

    def last_reply(self) -> Message | None: ...


class PanelFollower:
    def __init__(self, panel: MetricsPanel, poller: MetricsPoller, chat: ChatOnScreen, model_loaded: Callable[[], bool]):
        self.panel, self.poller, self.chat = panel, poller, chat
        self._model_loaded = model_loaded
        self._shown: str | None = None  # the conversation whose figures the panel shows

    def conversation_changed(self, conversation: Conversation | None) -> None:
        conversation_id = conversation.id if conversation else None
        if conversation_id == self._shown:
            return
        self._shown = conversation_id
        if self.chat.generating:
            self.generating_changed(True)
            return
        self._show_last_reply()
        if self.chat.local_replies and self._model_loaded():
            self.poller.poll_once()  # its context and the memory now

    def path_changed(self) -> None:
        """Another branch of the conversation on screen is shown: its own last reply's figures, not the last one written."""
        if not self.chat.generating:
            self._show_last_reply()

    def _show_last_reply(self) -> None:
        self.panel.show_conversation(self.chat.last_reply())

    def generating_changed(self, generating: bool) -> None:
        if not generating:
            self.poller.stop()
            return
        self.panel.on_turn_started()
        if self.chat.local_replies:
            self.poller.start()

    def reply_finished(self, message: Message) -> None:
        self.panel.on_turn_finished(message.record, state=message.state)
        if self.chat.local_replies:
            self.poller.poll_once()  # context and KV figures after the turn
