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
