"""The message being written, counted with the loaded model's own tokenizer (`model.count_tokens`) a moment after the
typing pauses, against the room the conversation on screen has left: what the composer says under the box, so a
message that cannot fit, or that pushes the oldest turns out of the context, is known before it is sent."""

from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QObject, QTimer, Signal

from app.chat.words import meter_words
from app.runtime_link import RuntimeLink
from app.storage.store import Message
from runtime.protocol import CountTokensParams, CountTokensResult, RpcError, methods

PAUSE_MS = 300  # counted once the typing pauses this long, not on every key


def context_used(path: Sequence[Message]) -> int:
    """Tokens the conversation's next prompt starts from: its last reply's prompt and the reply itself (0: none yet)."""
    for message in reversed(path):
        stats = message.record.stats if message.record is not None else None
        if message.role == "assistant" and stats is not None:
            return stats.prompt_tokens + stats.completion_tokens
    return 0


class MessageMeter(QObject):
    sig_changed = Signal(str, bool)  # what to say ("": nothing), and whether it warns

    def __init__(self, link: RuntimeLink, text: Callable[[], str], path: Callable[[], Sequence[Message]],
                 max_tokens: Callable[[], int | None], counts: Callable[[], bool], parent: QObject | None = None):
        """`counts`: whether to count now: the loaded model writes the replies (a remote endpoint's tokenizer is not this
        one's), and none is decoding (a count's work would take a core from its steps)."""
        super().__init__(parent)
        self.link = link
        self._text, self._path, self._max_tokens, self._counts = text, path, max_tokens, counts
        self._asked = 0  # the newest count asked for: an older answer arriving late is not shown
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PAUSE_MS)
        self._timer.timeout.connect(self._count)

    def text_changed(self) -> None:
        self._asked += 1  # a count of the text before this change, on its way, is not shown when it comes
        self._timer.start()

    def refresh(self) -> None:
        """The conversation, its settings or the model changed: count again now."""
        self._timer.stop()
        self._count()

    def _count(self) -> None:
        self._asked += 1
        text = self._text()
        if not text.strip() or not self._counts():
            self.sig_changed.emit("", False)
            return
        asked = self._asked
        self.link.call(methods.MODEL_COUNT_TOKENS, CountTokensParams(text), lambda result: self._on_counted(asked, result),
                       lambda error: self._on_failed(asked, error))

    def _on_counted(self, asked: int, result: CountTokensResult) -> None:
        if asked == self._asked:
            self.sig_changed.emit(*meter_words(result.tokens, context_used(self._path()), result.n_ctx, self._max_tokens()))

    def _on_failed(self, asked: int, _error: RpcError) -> None:
        if asked == self._asked:  # no model loaded (yet), or the runtime restarting: nothing to say
            self.sig_changed.emit("", False)
