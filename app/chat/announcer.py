"""A streaming reply read out politely to screen-reader users: whole sentences, now and then, never per token.

Screen readers speak what an app announces (QAccessibleAnnouncementEvent) after what they are saying
already when the announcement is polite. Announcing each token would make a reply a stutter of word
fragments and drown everything else, so the announcer collects the text as it streams and, at most
every ANNOUNCE_MS, announces the complete sentences that came meanwhile; the rest of the reply is
announced when it ends. sig_announced says what was announced (tests count it).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QWidget

ANNOUNCE_MS = 2_000
SENTENCE_END = re.compile(r"[.!?…:;。！？]['\")\]]*\s|\n\n")


def complete_sentences(text: str) -> int:
    """How much of `text` is whole sentences (up to and including the last sentence end and its space)."""
    ends = [m.end() for m in SENTENCE_END.finditer(text)]
    return ends[-1] if ends else 0


class ReplyAnnouncer(QObject):
    sig_announced = Signal(str)

    def __init__(self, chat, speaker: QWidget, parent: QObject | None = None):
        """`chat`: the ChatController (its streaming reply, sig_generating_changed); `speaker`: the widget that announces."""
        super().__init__(parent)
        self.chat = chat
        self.speaker = speaker
        self.announced = 0  # characters of the reply announced so far
        self.politeness = QAccessible.AnnouncementPoliteness.Polite
        self._timer = QTimer(self)
        self._timer.setInterval(ANNOUNCE_MS)
        self._timer.timeout.connect(self._on_tick)
        self._reply_text = ""
        chat.sig_generating_changed.connect(self._on_generating_changed)
        chat.sig_reply_finished.connect(self._on_reply_finished)

    def _streaming_text(self) -> str:
        reply = self.chat.reply
        return reply.text if reply is not None else ""

    def _on_generating_changed(self, generating: bool) -> None:
        if generating:
            self.announced = 0
            self._timer.start()
        else:
            self._timer.stop()

    def _on_tick(self) -> None:
        text = self._streaming_text()
        upto = complete_sentences(text)
        if upto > self.announced:
            self._announce(text[self.announced:upto])
            self.announced = upto

    def _on_reply_finished(self, message) -> None:
        self._announce(message.content[self.announced:])
        self.announced = 0

    def _announce(self, text: str) -> None:
        text = " ".join(text.split())
        if not text:
            return
        event = QAccessibleAnnouncementEvent(self.speaker, text)
        event.setPoliteness(self.politeness)
        QAccessible.updateAccessibility(event)
        self.sig_announced.emit(text)
