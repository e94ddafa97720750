"""A streaming reply read out politely to screen-reader users: whole sentences, now and then, never per token.

Screen readers speak what an app announces (QAccessibleAnnouncementEvent) after what they are saying
already when the announcement is polite. Announcing each token would make a reply a stutter of word
fragments and drown everything else, so the announcer collects the text as it streams and, at most
every ANNOUNCE_MS, announces the complete sentences that came meanwhile; the rest of the reply is
announced when it ends. sig_announced says what was announced (tests count it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from app.chat.controller import ChatController
    from app.storage.store import Message

ANNOUNCE_MS = 2_000
SENTENCE_END = re.compile(r"[.!?…:;。！？]['\")\]]*\s|\n\n")


def complete_sentences(text: str) -> int:
    """How much of `text` is whole sentences (up to and including the last sentence end and its space)."""
    ends = [m.end() for m in SENTENCE_END.finditer(text)]
    return ends[-1] if ends else 0


class ReplyAnnouncer(QObject):
    sig_announced = Signal(str)

    def __init__(self, chat: ChatController, speaker: QWidget, parent: QObject | None = None):
        """`chat`: the ChatController (the reply streaming in the open conversation, sig_generating_changed,
        sig_reply_finished); `speaker`: the widget that announces."""
        super().__init__(parent)
        self.chat = chat
        self.speaker = speaker
        self.politeness = QAccessible.AnnouncementPoliteness.Polite
        self._announced: dict[int, int] = {}  # reply message id -> characters of it announced so far
        self._timer = QTimer(self)
        self._timer.setInterval(ANNOUNCE_MS)
        self._timer.timeout.connect(self._on_tick)
        chat.sig_generating_changed.connect(self._on_generating_changed)
        chat.sig_reply_finished.connect(self._on_reply_finished)

    def _on_generating_changed(self, generating: bool) -> None:
        if generating:
            self._timer.start()
        else:
            self._timer.stop()

    def _on_tick(self) -> None:
        reply = self.chat.reply  # the one streaming in the conversation on screen
        if reply is None:
            return
        done = self._announced.get(reply.message_id, 0)
        upto = complete_sentences(reply.text)
        if upto > done:
            self._announce(reply.text[done:upto])
            self._announced[reply.message_id] = upto

    def _on_reply_finished(self, message: Message) -> None:
        done = self._announced.pop(message.id, 0)
        current = self.chat.current
        if current is not None and message.conversation_id == current.id:  # not a reply finishing out of sight
            self._announce(message.content[done:])

    def _announce(self, text: str) -> None:
        text = " ".join(text.split())
        if not text:
            return
        event = QAccessibleAnnouncementEvent(self.speaker, text)
        event.setPoliteness(self.politeness)
        QAccessible.updateAccessibility(event)
        self.sig_announced.emit(text)
