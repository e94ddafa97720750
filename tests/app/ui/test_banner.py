"""The banner above the conversation: what it says about one conversation goes when another is opened."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.storage import store as st
from app.ui.banner import Banner
from window_helpers import wait_reply


def test_what_concerns_one_conversation_goes_with_it_and_what_concerns_the_app_stays(qtbot):
    banner = Banner()
    qtbot.addWidget(banner)
    banner.say("The reply failed: too long", about="a")
    banner.leave("a")
    assert not banner.isHidden(), "it concerns the conversation on screen"
    banner.leave("b")
    assert banner.isHidden()
    banner.say("The runtime crashed")
    banner.leave("c")
    assert not banner.isHidden(), "a message about the whole app is dismissed by the user, not by opening a conversation"


def test_a_failed_replys_banner_leaves_when_another_conversation_is_opened(qtbot, window, english):
    window.composer.edit.setPlainText("Summarise this: " + "the harbour opens at six and closes at ten. " * 600)  # past 2,048 tokens
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    wait_reply(qtbot, window)
    assert window.chat.messages.messages[-1].state == st.FAILED
    failed = window.chat.current.id
    assert window.banner.isVisible() and window.banner_text.text().startswith("The reply failed: ")
    window.chat.new_conversation()
    assert window.banner.isHidden(), "the failure of another conversation's reply stays over the new one"
    window.chat.open(failed)
    assert window.chat_view.widgets[-1].message.state == st.FAILED  # said there still, under the reply
