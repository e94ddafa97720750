"""The conversation store: real SQLite files, WAL, migrations, crash leftovers."""

from __future__ import annotations

import sqlite3

import pytest

from app.storage import store as st
from app.storage.store import SchemaTooNew, Store


def test_a_new_store_is_wal_at_the_latest_schema(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    assert store.schema_version == st.SCHEMA_VERSION
    with sqlite3.connect(str(tmp_path / "c.sqlite3")) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_version_1_database_is_migrated_and_keeps_its_data(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(str(path)) as db:
        db.executescript(st.MIGRATIONS[0] + "\nPRAGMA user_version = 1;")
        db.execute("INSERT INTO conversations VALUES ('c1', 'Old chat', 1.0, 2.0, '', '{}')")
        db.execute("INSERT INTO messages (conversation_id, position, role, content, state, created_at) VALUES ('c1', 0, 'user', 'hi', 'complete', 1.0)")
    store = Store(path)
    assert store.schema_version == st.SCHEMA_VERSION
    (msg,) = store.messages("c1")
    assert msg.content == "hi" and msg.model == ""  # the column version 2 added, with its default


def test_a_database_from_a_newer_lokal_is_refused(tmp_path):
    path = tmp_path / "new.sqlite3"
    with sqlite3.connect(str(path)) as db:
        db.execute(f"PRAGMA user_version = {st.SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaTooNew, match="newer Lokal"):
        Store(path)


def test_a_reply_left_streaming_by_a_crash_is_interrupted_on_open(tmp_path):
    path = tmp_path / "c.sqlite3"
    store = Store(path)
    conv = store.create_conversation("t")
    store.add_message(conv.id, "user", "q")
    reply = store.add_message(conv.id, "assistant", "", state=st.STREAMING)
    store.update_message(reply.id, content="half a rep")  # a checkpoint
    store.close()
    (user, again) = Store(path).messages(conv.id)
    assert again.state == st.INTERRUPTED and again.content == "half a rep"


def test_delete_and_restore_a_conversation_keeps_every_branch(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("t", system_prompt="be brief", settings={"temperature": 0.1})
    for i, role in enumerate(["user", "assistant", "user", "assistant"]):
        store.add_message(conv.id, role, f"m{i}")
    first_reply = store.messages(conv.id)[1]
    store.set_selected_leaf(conv.id, first_reply.parent_id)
    store.add_message(conv.id, "assistant", "m1 again")
    deleted = store.delete_conversation(conv.id)
    assert store.conversations() == [] and store.messages(conv.id) == []
    store.restore_conversation(*deleted)
    back = store.conversation(conv.id)
    assert back.system_prompt == "be brief" and back.settings == {"temperature": 0.1}
    assert [m.content for m in store.messages(conv.id)] == ["m0", "m1 again"]
    assert len(store.all_messages(conv.id)) == 5
    store.select_branch(first_reply.id)
    assert [m.content for m in store.messages(conv.id)] == ["m0", "m1", "m2", "m3"]


def _released_database(path):
    """A database as the released Lokal (schema 2, main 6bfe667) left it: one conversation with a reply and its figures."""
    with sqlite3.connect(str(path)) as db:
        for version, script in enumerate(st.MIGRATIONS[:2], start=1):
            db.executescript(script + f"\nPRAGMA user_version = {version};")
        db.execute("INSERT INTO conversations VALUES ('c1', 'Old chat', 1.0, 2.0, '', '{\"max_tokens\": 512, \"temperature\": 0.2}')")
        db.execute("INSERT INTO conversations VALUES ('c2', 'Chosen', 1.0, 2.0, '', '{\"max_tokens\": 300}')")
        db.execute("INSERT INTO messages (conversation_id, position, role, content, state, created_at) VALUES ('c1', 0, 'user', 'hi', 'complete', 1.0)")
        db.execute(
            "INSERT INTO messages (conversation_id, position, role, content, state, stats, created_at, model) "
            "VALUES ('c1', 1, 'assistant', 'hello', 'complete', '{\"completion_tokens\": 3, \"finish_reason\": \"stop\"}', 1.5, 'SmolLM2')"
        )


def test_a_released_database_gains_the_reasoning_columns_and_keeps_its_replies(tmp_path):
    path = tmp_path / "old.sqlite3"
    _released_database(path)
    store = Store(path)
    assert store.schema_version == st.SCHEMA_VERSION
    user, reply = store.messages("c1")
    assert (reply.content, reply.model, reply.reasoning, reply.thinking_ms) == ("hello", "SmolLM2", "", 0.0)
    assert reply.record is not None and reply.record.stats is not None and reply.record.stats.completion_tokens == 3
    # The old default length (512, stored in every conversation) is no longer a cap; a length someone chose stays.
    assert store.conversation("c1").settings == {"max_tokens": None, "temperature": 0.2}
    assert store.conversation("c2").settings == {"max_tokens": 300}
    # A thinking reply is stored in the migrated file, apart from its answer, and read back after a reopen.
    thought = store.add_message("c1", "assistant", "", state=st.STREAMING)
    store.update_message(thought.id, reasoning="Let me count: 2 + 2", thinking_ms=1250.0)
    store.update_message(thought.id, content="4", state=st.COMPLETE)
    store.close()
    again = Store(path).message(thought.id)
    assert again is not None and (again.content, again.reasoning, again.thinking_ms) == ("4", "Let me count: 2 + 2", 1250.0)


def test_reasoning_survives_delete_and_undo(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("t")
    reply = store.add_message(conv.id, "assistant", "answer")
    store.update_message(reply.id, reasoning="thinking", thinking_ms=800.0)
    deleted = store.delete_conversation(conv.id)
    assert deleted is not None
    store.restore_conversation(*deleted)
    (back,) = store.messages(conv.id)
    assert (back.content, back.reasoning, back.thinking_ms) == ("answer", "thinking", 800.0)
