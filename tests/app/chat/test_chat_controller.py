"""ChatController's own logic, without a window: export, rename, and ending a reply when the window closes."""

from __future__ import annotations

import json

import pytest

from app.chat.controller import ChatController
from app.models.session import ModelSession
from app.runtime_link import RuntimeLink
from app.storage import store as st
from app.storage.store import Store
from app.storage import tree


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


# ---- a long conversation (issue #33) -------------------------------------------------------------------


def fill(store, conversation_id: str, n: int) -> None:
    """n alternating user and assistant messages, written in one transaction (add_message would take one each)."""
    import sqlite3
    import time

    with sqlite3.connect(str(store.path)) as db:
        db.executemany(
            "INSERT INTO messages (conversation_id, position, role, content, state, created_at) VALUES (?, ?, ?, ?, 'complete', ?)",
            ((conversation_id, i, "user" if i % 2 == 0 else "assistant", f"turn {i}", time.time()) for i in range(n)),
        )
        tree.link_as_one_path(db, conversation_id)


def test_a_long_conversation_opens_with_its_newest_messages_and_shows_earlier_ones_on_request(chat):
    from app.chat.history import SHOWN_MESSAGES

    conv = chat.new_conversation("long")
    fill(chat.store, conv.id, 20_000)
    chat.open(None)
    chat.open(conv.id)
    assert chat.messages.rowCount() == SHOWN_MESSAGES and chat.has_earlier()
    assert [m.position for m in chat.messages.messages] == list(range(20_000 - SHOWN_MESSAGES, 20_000))
    assert chat.show_earlier() == SHOWN_MESSAGES
    assert [m.position for m in chat.messages.messages] == list(range(20_000 - 2 * SHOWN_MESSAGES, 20_000))


def test_a_long_conversation_sends_only_the_newest_messages_that_can_reach_the_model(chat):
    from app.chat.controller import ConversationSettings
    from app.chat.history import most_kept

    limit = most_kept(512)  # the most messages 512 tokens can hold
    conv = chat.new_conversation("long")
    chat.set_settings("Be brief.", ConversationSettings(n_ctx=512))
    fill(chat.store, conv.id, 20_000)
    chat.open(None)
    chat.open(conv.id)
    assert chat.send("newest")
    sent = chat.reply.call.params.messages
    assert sent[0].role == "system" and sent[1].role == "user" and sent[-1].content == "newest"
    assert limit <= len(sent) - 1 < 2 * limit  # sent from a step of `limit` messages
    assert [m.content for m in sent[1:-1]] == [f"turn {i}" for i in range(20_001 - len(sent) + 1, 20_000)]
    chat.end_all()
    # The next turns start where this one did (the runtime's remembered cut, an index into them, holds) ...
    assert chat.send("and again")
    again = chat.reply.call.params.messages
    assert again[1] == sent[1] and again[-1].content == "and again"
    chat.end_all()
    # ... until the conversation has grown by a step: then the part sent moves on by one.
    fill_more = [("user" if i % 2 == 0 else "assistant", f"later {i}") for i in range(2 * limit)]
    for role, text in fill_more:
        chat.store.add_message(conv.id, role, text)
    chat.open(None)
    chat.open(conv.id)
    assert chat.send("later still")
    later = chat.reply.call.params.messages
    assert later[1].role == "user" and limit <= len(later) - 1 < 2 * limit and later[1] != sent[1]


def test_the_part_sent_to_a_remote_endpoint_is_no_more_messages_than_lokals_own_api_accepts():
    """Its context is not known: at most REMOTE_MAX_MESSAGES, system prompt included (a Lokal peer refuses more)."""
    from app.chat.history import REMOTE_MAX_MESSAGES, send_from

    for count in (REMOTE_MAX_MESSAGES - 1, REMOTE_MAX_MESSAGES, 3 * REMOTE_MAX_MESSAGES + 7, 100_000):
        start = send_from(count, REMOTE_MAX_MESSAGES // 2)
        assert REMOTE_MAX_MESSAGES // 2 <= count - start and count - start + 1 <= REMOTE_MAX_MESSAGES, count


def test_the_last_message_can_be_edited_only_while_no_reply_is_written_after_it(chat, qtbot):
    chat.new_conversation("edit")
    assert not chat.can_edit_last()  # nothing written yet
    assert chat.send("first")
    assert chat.generating and not chat.can_edit_last()
    with qtbot.waitSignal(chat.sig_refused, timeout=1_000) as refused:
        assert not chat.edit_and_resend(0, "changed")
    assert refused.args == ["Stop the reply first (Esc), then resend the edited message"]
    assert chat.messages.messages[0].content == "first"
    chat.end_all()
    assert chat.can_edit_last()
    assert chat.last_reply() is chat.messages.messages[-1] and chat.last_reply().role == "assistant"


def test_nothing_can_be_sent_to_the_runtime_before_a_model_is_chosen_but_a_remote_model_needs_none(chat):
    from app.models.session import ModelChoice

    assert chat.needs_model
    other = RuntimeLink(auto_restart=False)  # stands for a remote endpoint's link: it answers chat.generate too
    try:
        assert chat.set_reply_link(other, "remote-model")
        assert not chat.needs_model
        assert chat.set_reply_link(None)
        chat.model_session.load(ModelChoice("/models/m.gguf", n_ctx=2048))
        assert not chat.needs_model
    finally:
        other.close()


def test_a_new_context_size_in_the_settings_loads_the_model_again_with_it(chat):
    from app.chat.controller import ConversationSettings
    from app.models.session import ModelChoice

    chat.model_session.load(ModelChoice("/models/m.gguf", n_ctx=2048))
    chat.new_conversation("context")
    chat.set_settings("", ConversationSettings(n_ctx=2048))
    assert chat.model_session.wanted.n_ctx == 2048
    chat.set_settings("Be brief.", ConversationSettings(n_ctx=512))
    assert chat.model_session.wanted == ModelChoice("/models/m.gguf", n_ctx=512)
    assert chat.model_session.loading == chat.model_session.wanted  # the load went to the runtime


def test_the_conversation_on_screen_at_the_last_close_opens_again_unless_it_was_deleted(chat, qtbot):
    kept = chat.new_conversation("kept")
    chat.new_conversation("other")
    chat.open(kept.id)
    again = ChatController(chat.store, chat.runtime_link, chat.model_session)
    again.open_last()
    assert again.current.id == kept.id
    chat.delete(kept.id)
    chat.open(kept.id)  # gone: nothing opens, and nothing is on screen
    third = ChatController(chat.store, chat.runtime_link, chat.model_session)
    with qtbot.waitSignal(third.sig_current_changed, timeout=1_000) as changed:
        third.open_last()
    assert changed.args == [None] and third.current is None
