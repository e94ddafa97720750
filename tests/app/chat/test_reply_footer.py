"""The line under a reply, from its ReplyRecord: its figures once it ended, its error once it failed."""

from __future__ import annotations

from app.chat.widgets.message_view import MessageWidget
from app.storage import store as st
from app.storage.reply_record import ReplyRecord
from app.storage.store import Message
from runtime.protocol import GenerationStats


def shown(qtbot, message: Message) -> MessageWidget:
    widget = MessageWidget()
    qtbot.addWidget(widget)
    widget.show_message(message, is_last=True, generating=False)
    return widget


def test_a_reply_that_ended_shows_its_figures_and_a_failed_one_its_error(qtbot, english):
    stats = GenerationStats(completion_tokens=25, decode_tokens_per_s=57.0, chat_template_fallback="no_such_filter")
    done = shown(qtbot, Message(1, "c", 1, "assistant", "An answer.", st.COMPLETE, ReplyRecord(stats, "stop"), model="SmolLM2 135M"))
    assert not done.footer.isHidden()
    assert done.footer.text().startswith("25 tokens · 57.0 tok/s · SmolLM2 135M")
    assert done.footer.toolTip() == "no_such_filter"

    failed = shown(qtbot, Message(2, "c", 1, "assistant", "", st.FAILED, ReplyRecord(error="the model ran out of memory")))
    assert not failed.footer.isHidden() and failed.footer.text() == "the model ran out of memory"

    # No decode speed (a remote endpoint that sent no usage), no record (an old row that could not be read): no footer.
    unmeasured = shown(qtbot, Message(3, "c", 1, "assistant", "An answer.", st.COMPLETE, ReplyRecord(GenerationStats(total_ms=900.0), "stop")))
    unread = shown(qtbot, Message(4, "c", 1, "assistant", "An answer.", st.COMPLETE, None))
    assert unmeasured.footer.isHidden() and unread.footer.isHidden()
