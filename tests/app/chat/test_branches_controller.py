"""The chat controller's branch commands over a real store (no runtime needed: nothing here is sent)."""

from __future__ import annotations

import json

import pytest

from app.chat.controller import ChatController
from app.models.session import ModelSession
from app.runtime_link import RuntimeLink
from app.storage.store import Store


@pytest.fixture
def chat(qtbot, tmp_path):
    link = RuntimeLink(auto_restart=False)  # never started
    controller = ChatController(Store(tmp_path / "c.sqlite3"), link, ModelSession(link))
    yield controller
    link.close()


def branched(chat):
    """q -> a1 -> q2 -> a2, and a1b beside a1 (selected): the path on screen is q, a1b."""
    conv = chat.new_conversation("t")
    store = chat.store
    q = store.add_message(conv.id, "user", "q")
    a1 = store.add_message(conv.id, "assistant", "a1")
    q2 = store.add_message(conv.id, "user", "q2")
    store.add_message(conv.id, "assistant", "a2")
    store.set_selected_leaf(conv.id, q.id)
    store.add_message(conv.id, "assistant", "a1b")
    chat.open(None)
    chat.open(conv.id)
    return conv, a1, q2


def contents(chat):
    return [m.content for m in chat.messages.messages]


def test_switching_shows_the_other_branch_and_its_newest_path(chat):
    branched(chat)
    assert contents(chat) == ["q", "a1b"] and chat.last_branch_row() == 1
    assert not chat.switch_branch(1, 1)  # the last of two: nothing after it
    assert chat.switch_branch(1, -1) and contents(chat) == ["q", "a1", "q2", "a2"]
    assert chat.switch_last_branch(1) and contents(chat) == ["q", "a1b"]


def test_reveal_message_opens_its_conversation_on_its_branch(chat):
    conv, _a1, q2 = branched(chat)
    chat.new_conversation("another")
    revealed: list[int] = []
    chat.sig_revealed.connect(lambda message_id, _words: revealed.append(message_id))
    assert chat.reveal_message(q2.id)
    assert chat.current.id == conv.id and contents(chat) == ["q", "a1", "q2", "a2"] and revealed == [q2.id]
    assert not chat.reveal_message(10_000)  # no such message (deleted meanwhile)


def test_a_deleted_branch_comes_back_with_undo(chat):
    branched(chat)
    chat.switch_branch(1, -1)
    deleted: list[object] = []
    chat.sig_branch_deleted.connect(deleted.append)
    assert chat.delete_branch(1)
    assert contents(chat) == ["q", "a1b"] and chat.messages.message(1).branches == 1
    chat.undo_delete_branch(deleted[0])
    assert contents(chat) == ["q", "a1", "q2", "a2"] and chat.messages.message(1).branches == 2


def test_json_export_holds_every_branch_and_markdown_the_path_on_screen(chat, tmp_path):
    conv, _a1, _q2 = branched(chat)
    chat.export(conv.id, "json", tmp_path / "t.json")
    chat.export(conv.id, "md", tmp_path / "t.md")
    data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert [m["content"] for m in data["messages"]] == ["q", "a1b"]
    assert sorted(m["content"] for m in data["branches"]) == ["a1", "a2", "q2"]
    assert data["messages"][1]["parent"] == data["messages"][0]["id"]
    markdown = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert "a1b" in markdown and "q2" not in markdown
