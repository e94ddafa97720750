"""ChatController's own logic, without a window: export, rename, and ending a reply when the window closes."""

from __future__ import annotations

import json

import pytest

from app.chat.controller import ChatController
from app.models.session import ModelSession
from app.runtime_link import RuntimeLink
from app.storage import store as st
from app.storage.store import Store


@pytest.fixture
def chat(qtbot, tmp_path):
    link = RuntimeLink(auto_restart=False)  # never started: nothing here needs the runtime to answer
    controller = ChatController(Store(tmp_path / "c.sqlite3"), link, ModelSession(link))
    yield controller
    link.close()


def test_export_writes_the_conversation_as_markdown_or_json(chat, tmp_path):
    conv = chat.new_conversation("Plans / 2024: draft?")
    chat.store.add_message(conv.id, "user", "Hi")
    assert chat.export_file_name(conv.id, "md") == "Plans _ 2024_ draft_.md"
    assert chat.export_file_name(conv.id, "json") == "Plans _ 2024_ draft_.json"
    chat.export(conv.id, "md", tmp_path / "out.md")
    chat.export(conv.id, "json", tmp_path / "out.json")
    assert (tmp_path / "out.md").read_text(encoding="utf-8").startswith("# Plans / 2024: draft?\n")
    assert [m["content"] for m in json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["messages"]] == ["Hi"]


def test_a_title_with_nothing_usable_exports_as_chat(chat):
    conv = chat.new_conversation("   ")
    assert chat.export_file_name(conv.id, "md") == "chat.md"


def test_rename_updates_the_store_the_list_and_the_current_conversation(chat):
    conv = chat.new_conversation()
    chat.rename(conv.id, "  Trip  ")
    assert chat.store.conversation(conv.id).title == "Trip"
    assert chat.conversation().title == "Trip"  # the current one
    assert chat.conversations.conversation(conv.id).title == "Trip"
    chat.rename(conv.id, "  ")  # a blank title is refused: the old one stays
    assert chat.conversation(conv.id).title == "Trip"


def test_end_all_saves_the_streaming_reply_as_stopped_at_once(chat):
    assert chat.send("Hello")
    assert chat.generating
    chat.end_all()
    assert not chat.generating
    reply = chat.store.messages(chat.current.id)[-1]
    assert reply.role == "assistant" and reply.state == st.STOPPED
