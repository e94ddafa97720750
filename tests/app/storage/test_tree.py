"""Messages as a tree (app/storage/tree.py): the migration from the released schema, and the branch operations."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from app.storage import store as st
from app.storage.store import Store

# Made by the Store of main 6bfe667 (schema 2): "Tea" (4 messages, one with a reply record, a system prompt and
# settings), "Edited once" (a reply deleted by the old regenerate and written again, FAILED) and "Empty".
RELEASE_DB = Path(__file__).parent / "data" / "release-6bfe667.sqlite3"


def _contents(messages: list[st.Message]) -> list[str]:
    return [m.content for m in messages]


def test_a_database_of_the_released_schema_keeps_every_conversation(tmp_path):
    path = tmp_path / "c.sqlite3"
    shutil.copy(RELEASE_DB, path)
    with sqlite3.connect(str(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(st.MIGRATIONS[:2])  # the file is what it claims
        before = db.execute("SELECT conversation_id, position, role, content, state, stats, model FROM messages ORDER BY conversation_id, position").fetchall()
    store = Store(path)
    assert store.schema_version == st.SCHEMA_VERSION
    by_title = {c.title: c for c in store.conversations()}
    assert set(by_title) == {"Tea", "Edited once", "Empty"}
    tea = by_title["Tea"]
    assert tea.system_prompt == "Be brief." and tea.settings == {"temperature": 0.2}
    path_msgs = store.messages(tea.id)
    assert _contents(path_msgs) == ["How do I brew green tea?", "Water at 80 °C, two minutes.", "And black tea?", "Boiling water, four minutes."]
    assert [m.depth for m in path_msgs] == [0, 1, 2, 3]
    assert [m.parent_id for m in path_msgs] == [None] + [m.id for m in path_msgs[:-1]]
    assert path_msgs[1].record is not None and path_msgs[1].record.stats.completion_tokens == 9
    assert all((m.branch, m.branches) == (1, 1) for m in path_msgs)
    assert tea.selected_leaf == path_msgs[-1].id
    edited = store.messages(by_title["Edited once"].id)
    assert _contents(edited) == ["first", "again"] and edited[1].state == st.FAILED
    assert store.messages(by_title["Empty"].id) == [] and by_title["Empty"].selected_leaf is None
    store.close()
    with sqlite3.connect(str(path)) as db:
        after = db.execute("SELECT conversation_id, position, role, content, state, stats, model FROM messages ORDER BY conversation_id, position").fetchall()
    assert after == before  # every row, field for field


def test_edits_and_regenerations_are_siblings_and_selecting_follows_the_newest_leaf(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("t")
    q = store.add_message(conv.id, "user", "q")
    a1 = store.add_message(conv.id, "assistant", "a1")
    store.add_message(conv.id, "user", "q2")
    store.add_message(conv.id, "assistant", "a2")
    store.set_selected_leaf(conv.id, q.id)  # a regeneration of a1
    a1b = store.add_message(conv.id, "assistant", "a1b")
    assert (a1b.branch, a1b.branches, a1b.parent_id, a1b.depth) == (2, 2, q.id, 1)
    assert _contents(store.messages(conv.id)) == ["q", "a1b"]
    assert [m.id for m in store.siblings(a1.id)] == [a1.id, a1b.id]
    # Back to the first reply: the path goes on to the newest leaf under it.
    assert store.select_branch(a1.id) is not None
    shown = store.messages(conv.id)
    assert _contents(shown) == ["q", "a1", "q2", "a2"] and (shown[1].branch, shown[1].branches) == (1, 2)
    edit = store.add_message(conv.id, "user", "q edited", parent_id=None)  # an edit of the first message
    assert (edit.branch, edit.branches) == (2, 2) and _contents(store.messages(conv.id)) == ["q edited"]
    assert store.select_leaf_through(conv.id, a1b.id) == a1b.id
    assert store.select_leaf_through("another", a1b.id) is None
    assert store.path_ids(conv.id) == [q.id, a1b.id]


def test_deleting_a_branch_moves_the_path_to_a_sibling_and_undo_brings_it_back(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("t")
    q = store.add_message(conv.id, "user", "q")
    a1 = store.add_message(conv.id, "assistant", "a1")
    store.add_message(conv.id, "user", "q2")
    store.set_selected_leaf(conv.id, q.id)
    store.add_message(conv.id, "assistant", "a1b")
    store.select_branch(a1.id)
    deleted = store.delete_branch(a1.id)
    assert deleted is not None and _contents(deleted.messages) == ["a1", "q2"]
    assert _contents(store.messages(conv.id)) == ["q", "a1b"]
    store.restore_branch(deleted)
    assert _contents(store.messages(conv.id)) == ["q", "a1", "q2"]
    # The only branch: the path ends at its parent.
    only = store.delete_branch(store.messages(conv.id)[2].id)
    assert only is not None and _contents(store.messages(conv.id)) == ["q", "a1"]


def test_a_long_path_is_read_a_part_at_a_time_by_depth(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("t")
    for i in range(30):
        store.add_message(conv.id, "user" if i % 2 == 0 else "assistant", f"m{i}")
    newest = store.messages(conv.id, newest=10)
    assert [m.depth for m in newest] == list(range(20, 30))
    assert [m.depth for m in store.messages(conv.id, before=20, newest=10)] == list(range(10, 20))
    assert [m.depth for m in store.messages(conv.id, since=25)] == list(range(25, 30))
    assert store.message_count(conv.id) == 30
    assert [t[1] for t in store.turns(conv.id, since=28)] == ["m28", "m29"]
