"""#30 in the real window, over the real runtime and the starter model: a database of the released Lokal
(schema 2) opens, migrated, and a reply cut by its length continues in place as one message."""

from __future__ import annotations

import sqlite3

import pytest
from PySide6.QtCore import Qt

from app.storage import store as st
from window_helpers import open_window, wait_reply

pytestmark = pytest.mark.slow

OLD_SETTINGS = '{"temperature": 0.0, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.1, "max_tokens": 4, "n_ctx": 2048, "seed": 1, "speculation": null}'


def released_database(path) -> None:
    """What the released Lokal (main 6bfe667, schema 2) left: a conversation whose replies are 4 tokens long at most."""
    with sqlite3.connect(str(path)) as db:
        for version, script in enumerate(st.MIGRATIONS[:2], start=1):
            db.executescript(script + f"\nPRAGMA user_version = {version};")
        db.execute("INSERT INTO conversations VALUES ('c1', 'Counting', 1.0, 2.0, '', ?)", (OLD_SETTINGS,))
        db.execute("INSERT INTO messages (conversation_id, position, role, content, state, created_at) VALUES ('c1', 0, 'user', 'Say hello.', 'complete', 1.0)")
        db.execute(
            "INSERT INTO messages (conversation_id, position, role, content, state, stats, created_at, model) "
            "VALUES ('c1', 1, 'assistant', 'Hello!', 'complete', '{\"completion_tokens\": 3, \"decode_tokens_per_s\": 40.0, \"finish_reason\": \"stop\"}', 1.5, 'SmolLM2')"
        )
        db.execute("INSERT INTO app_state VALUES ('last_conversation', 'c1')")


def test_a_released_database_opens_and_a_reply_cut_by_its_length_continues_in_place(qtbot, store_path, starter_model, english):
    released_database(store_path)
    window = open_window(qtbot, store_path, starter_model)
    try:
        assert window.store.schema_version == st.SCHEMA_VERSION
        assert window.chat.current is not None and window.chat.current.id == "c1"
        assert [m.content for m in window.chat.messages.messages] == ["Say hello.", "Hello!"]
        assert window.chat.settings().max_tokens == 4  # a length the user chose stays (only the old default, 512, is dropped)
        window.composer.edit.setFocus()
        window.composer.edit.setPlainText("Write a long story about a lighthouse.")
        qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
        wait_reply(qtbot, window)
        cut = window.chat.messages.messages[-1]
        cut_text = cut.content  # the model's message object grows in place as the reply continues
        assert cut.record is not None and cut.record.finish_reason == "length", cut
        widget = window.chat_view.widgets[-1]
        assert not widget.cut.isHidden() and not widget.continue_button.isHidden()
        assert widget.cut_note.text() == "The reply was cut at its length limit."
        qtbot.mouseClick(widget.continue_button, Qt.MouseButton.LeftButton)
        assert window.chat.generating
        wait_reply(qtbot, window)
        stored = window.store.messages("c1")
        assert len(stored) == 4  # the continued reply is still one message
        longer = stored[-1]
        assert longer.id == cut.id and longer.state == st.COMPLETE
        assert longer.content.startswith(cut_text) and len(longer.content) > len(cut_text)
        assert window.chat.messages.messages[-1].content == longer.content
    finally:
        window.shutdown()
