"""The FTS5 index over every message: what it finds, how it highlights, and that its triggers keep it in step."""

from __future__ import annotations

import re
import sqlite3
import unicodedata

import pytest

from app.search import query
from app.search.query import MARK_END, MARK_START, fts_query, highlighted_html, search
from app.storage.store import MIGRATIONS, SCHEMA_VERSION, Store


@pytest.fixture
def store(store_path):
    s = Store(store_path)
    yield s
    s.close()


def _db(store: Store) -> sqlite3.Connection:
    return sqlite3.connect(str(store.path))


def _ids(store: Store, text: str, conversation_id: str | None = None) -> list[int]:
    db = _db(store)
    try:
        return [hit.message_id for hit in search(db, text, conversation_id).hits]
    finally:
        db.close()


def test_a_word_is_found_in_any_message_of_any_conversation_newest_first(store):
    a = store.create_conversation("Gardening")
    b = store.create_conversation("Cooking")
    m1 = store.add_message(a.id, "user", "How do I grow tomatoes on a balcony?")
    store.add_message(a.id, "assistant", "Use a deep pot and plenty of sun.")
    m3 = store.add_message(b.id, "assistant", "Tomatoes make a fine sauce with basil.")
    db = _db(store)
    hits = search(db, "tomatoes").hits
    db.close()
    assert [h.message_id for h in hits] == [m3.id, m1.id]
    assert [h.title for h in hits] == ["Cooking", "Gardening"]
    assert hits[0].conversation_id == b.id and hits[0].role == "assistant" and hits[0].created_at == m3.created_at
    assert _ids(store, "tomatoes", a.id) == [m1.id]  # within one conversation
    assert _ids(store, "tomato") == [m3.id, m1.id]  # the last word is a prefix while it is typed
    assert _ids(store, "deep sun") == [m1.id + 1]  # words are ANDed
    assert _ids(store, "deep moon") == []
    assert _ids(store, "TOMATOES") == [m3.id, m1.id]


def test_the_match_is_highlighted_in_the_snippet_and_the_html_is_escaped(store):
    conv = store.create_conversation("Markup")
    store.add_message(conv.id, "user", "Is <script>alert(1)</script> dangerous in a snippet about kangaroos?")
    db = _db(store)
    (hit,) = search(db, "kangaroos").hits
    db.close()
    assert f"{MARK_START}kangaroos{MARK_END}" in hit.snippet
    html = highlighted_html(hit.snippet)
    assert "<b>kangaroos</b>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert MARK_START not in html and MARK_END not in html


def test_a_long_message_gives_a_snippet_around_the_match(store):
    conv = store.create_conversation("Long")
    store.add_message(conv.id, "assistant", " ".join(["filler"] * 400 + ["needle"] + ["filler"] * 400))
    db = _db(store)
    (hit,) = search(db, "needle").hits
    db.close()
    assert f"{MARK_START}needle{MARK_END}" in hit.snippet
    assert hit.snippet.startswith(query.ELLIPSIS) and hit.snippet.endswith(query.ELLIPSIS)
    assert len(hit.snippet.split()) <= query.SNIPPET_TOKENS + 2


def test_triggers_follow_an_edit_a_streaming_checkpoint_and_deletions(store):
    conv = store.create_conversation("Edits")
    user = store.add_message(conv.id, "user", "Tell me about walruses")
    reply = store.add_message(conv.id, "assistant", "", state="streaming")
    store.update_message(reply.id, content="Walruses live in the")  # a checkpoint while it streams
    assert _ids(store, "walruses") == [reply.id, user.id]
    store.update_message(reply.id, content="Walruses live in the Arctic.", state="complete")
    assert _ids(store, "arctic") == [reply.id]

    store.update_message(user.id, content="Tell me about narwhals")  # edited in place
    assert _ids(store, "walruses") == [reply.id]
    assert _ids(store, "narwhals") == [user.id]

    store.delete_branch(reply.id)  # a branch deleted (regenerating keeps the old reply: it is a sibling now)
    assert _ids(store, "arctic") == []
    deleted = store.delete_conversation(conv.id)  # the messages go by the foreign key's cascade
    assert _ids(store, "narwhals") == []
    assert deleted is not None
    store.restore_conversation(*deleted)  # undo
    assert _ids(store, "narwhals") == [user.id]
    db = _db(store)
    db.execute("INSERT INTO message_search(message_search) VALUES ('integrity-check')")  # raises if the index and the table disagree
    db.close()


@pytest.mark.parametrize("typed", ['"', '""', "AND (", "OR", "NOT", "NEAR(a b", "title:foo", "*", "a AND", "-x", "(", ")", "^", "col:", "'", "\\", "\x00", "tomatoes\"", "\"tomatoes"])
def test_what_the_user_types_is_never_fts5_syntax(store, typed):
    conv = store.create_conversation("Syntax")
    m = store.add_message(conv.id, "user", "tomatoes and foo OR x near col")
    db = _db(store)
    hits = search(db, typed).hits  # never raises
    db.close()
    assert all(h.message_id == m.id for h in hits)
    assert _ids(store, 'tomatoes"') == [m.id]  # a stray quote next to a word still finds the word


def test_operators_are_searched_as_words():
    assert fts_query('AND (') == '"AND"*'
    assert fts_query('say "hi"') == '"say" """hi"""*'
    assert fts_query('" ( *') is None
    assert fts_query("   ") is None


def test_the_migration_builds_the_index_for_messages_already_there(store_path):
    with sqlite3.connect(str(store_path)) as db:  # a database of the released schema (version 2), with messages
        for version, script in enumerate(MIGRATIONS[:2], start=1):
            db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;")
        db.execute("INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Old one', 1, 1)")
        db.executemany(
            "INSERT INTO messages (conversation_id, position, role, content, created_at) VALUES ('c1', ?, ?, ?, 1)",
            [(0, "user", "What is a quokka?"), (1, "assistant", "A small marsupial, the quokka.")],
        )
    db.close()
    store = Store(store_path)
    try:
        assert store.schema_version == SCHEMA_VERSION
        assert _ids(store, "quokka") == [2, 1]
        assert [m.content for m in store.messages("c1")] == ["What is a quokka?", "A small marsupial, the quokka."]
    finally:
        store.close()


def test_whole_words_come_first_then_words_the_last_one_begins_each_newest_first_across_pages(store):
    conv = store.create_conversation("Plants")
    whole_old = store.add_message(conv.id, "user", "a tomato in spring")
    longer_old = store.add_message(conv.id, "user", "tomatoes in summer")
    whole_new = store.add_message(conv.id, "user", "one tomato more")
    longer_new = store.add_message(conv.id, "user", "tomatoey sauce")
    assert _ids(store, "tomato") == [whole_new.id, whole_old.id, longer_new.id, longer_old.id]
    db = _db(store)
    pages, cursor = [], None
    while True:  # a page of one at a time: the cursor crosses from the whole-word run to the prefix run
        page = search(db, "tomato", cursor=cursor, limit=1)
        pages += [h.message_id for h in page.hits]
        if page.next is None:
            break
        cursor = page.next
    db.close()
    assert pages == [whole_new.id, whole_old.id, longer_new.id, longer_old.id]
    assert _ids(store, "t") == []  # one character: a word, never a prefix of nearly everything
    assert fts_query("t") is None and fts_query("t", prefix_last=False) == '"t"'


def test_a_long_prefix_within_one_conversation_finds_what_fts5_itself_finds_and_marks_only_those_words(store):
    """Ctrl+F's prefix run walks the index by the word's first letters and keeps the messages FTS5's own prefix
    query would match (checked against it here), on words with capitals, diacritics and underscores."""
    import random

    rng = random.Random(5)
    vocabulary = ["Tomate", "tomates", "tomatillo", "TOMATO_sauce", "tomb", "tome", "tómato", "automaton", "potato", "tomato", "tomat"]
    conv = store.create_conversation("Kitchen")
    other = store.create_conversation("Elsewhere")
    for i in range(120):
        store.add_message(conv.id if i % 3 else other.id, "user", " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 6))))
    db = _db(store)
    try:
        for typed in ["tomat", "toma", "tomati", "sauce tomat"]:
            expected_whole = [r[0] for r in db.execute(
                "SELECT rowid FROM message_search WHERE message_search MATCH ? AND rowid IN (SELECT id FROM messages WHERE conversation_id = ?) ORDER BY rowid DESC",
                (fts_query(typed, prefix_last=False), conv.id))]
            expected_prefix = [r[0] for r in db.execute(
                "SELECT rowid FROM message_search WHERE message_search MATCH ? AND rowid IN (SELECT id FROM messages WHERE conversation_id = ?) ORDER BY rowid DESC",
                (f"({fts_query(typed)}) NOT ({fts_query(typed, prefix_last=False)})", conv.id))]
            pages, cursor = [], None
            while True:
                page = search(db, typed, conv.id, cursor=cursor, limit=7)
                pages += page.hits
                if page.next is None:
                    break
                cursor = page.next
            assert [h.message_id for h in pages] == expected_whole + expected_prefix, typed
            last = typed.split()[-1]
            for hit in pages:
                for marked in re.findall(MARK_START + "(.*?)" + MARK_END, hit.snippet):
                    plain = unicodedata.normalize("NFKD", marked.casefold())
                    plain = "".join(ch for ch in plain if not unicodedata.combining(ch))
                    assert plain.startswith(last) or plain in typed.split(), (typed, hit.snippet)
    finally:
        db.close()
