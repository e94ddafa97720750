"""The shared window (tests/app/conftest.py's module_window) as each attachments test wants it."""

from __future__ import annotations

import pytest

from waiting import qt_wait_until
from window_helpers import REPLY_MS


@pytest.fixture
def win(module_window):
    """A new conversation, nothing attached, no banner; after the test, nothing attached and no reply running."""
    window = module_window
    window.chat.new_conversation()
    window.composer.sent()
    window.banner.hide()
    yield window
    window.composer.sent()
    qt_wait_until(lambda: not window.chat.any_generating, REPLY_MS / 1000, "the reply ending")
