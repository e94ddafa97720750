"""A message's attachments and a reply's citations in the real SQLite store, and the migration that adds them."""

from __future__ import annotations

import dataclasses
import sqlite3

from app.storage import store as st
from app.storage.attachments import StoredAttachment, StoredCitation
from app.storage.store import Store

PDF = StoredAttachment("a" * 64, "document", "report.pdf", "application/pdf", 120_000, 5_400, 12, False, True, "")
PICTURE = StoredAttachment("b" * 64, "image", "cat.png", "image/png", 2_000, 0, 0, True, False, "", thumbnail=b"thumb", image=b"\x89PNG whole")


def _old_database(path):
    """A database as the released Lokal (schema 2) left it, with a conversation in it."""
    with sqlite3.connect(str(path)) as db:
        for i, script in enumerate(st.MIGRATIONS[:2], start=1):
            db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {i};\nCOMMIT;")
        db.execute("INSERT INTO conversations VALUES ('c1', 'Old chat', 1.0, 2.0, '', '{}')")
        db.execute("INSERT INTO messages (conversation_id, position, role, content, state, created_at, model) VALUES ('c1', 0, 'user', 'hi', 'complete', 1.0, '')")
        db.execute("INSERT INTO messages (conversation_id, position, role, content, state, created_at, model) VALUES ('c1', 1, 'assistant', 'hello', 'complete', 1.5, 'm')")


def test_an_old_database_is_migrated_its_messages_kept_and_attachments_can_be_added(tmp_path):
    path = tmp_path / "old.sqlite3"
    _old_database(path)
    store = Store(path)
    assert store.schema_version == st.SCHEMA_VERSION
    old = store.messages("c1")
    assert [(m.content, m.attachments, m.citations) for m in old] == [("hi", [], []), ("hello", [], [])]
    sent = store.add_message("c1", "user", "what does it say?", attached=[PDF, PICTURE])
    assert [a.name for a in sent.attachments] == ["report.pdf", "cat.png"] and sent.attachments[1].image == b""
    store.close()
    again = Store(path)
    (reopened,) = again.messages("c1", since=2)
    assert [a.name for a in reopened.attachments] == ["report.pdf", "cat.png"]
    assert reopened.attachments[0].tokens == 5_400 and reopened.attachments[0].pages == 12 and reopened.attachments[0].searchable
    assert reopened.attachments[1].thumbnail == b"thumb"
    assert again.image_bytes(PICTURE.id) == b"\x89PNG whole"


def test_citations_stay_with_their_reply_and_the_documents_list_has_each_document_once(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    first = store.create_conversation("first")
    store.add_message(first.id, "user", "q", attached=[PDF])
    reply = store.add_message(first.id, "assistant", "a")
    cited = [StoredCitation(PDF.id, "report.pdf", 3, "page 3", "The answer is 42."), StoredCitation(PDF.id, "report.pdf", 9, "page 7", "More.")]
    store.save_citations(reply.id, cited)
    later = store.create_conversation("later")
    store.add_message(later.id, "user", "again", attached=[PDF, PICTURE])  # reused: the same row, not a copy
    assert store.message(reply.id).citations == cited
    assert [d.name for d in store.documents()] == ["report.pdf"]  # pictures are not documents
    assert [t[4] for t in store.turns(first.id)] == [[dataclasses.replace(PDF, image=b"")], []]


def test_a_deleted_conversation_comes_back_with_its_attachments_and_citations(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("t")
    store.add_message(conv.id, "user", "q", attached=[PICTURE])
    reply = store.add_message(conv.id, "assistant", "a")
    store.save_citations(reply.id, [StoredCitation(PDF.id, "report.pdf", 1, "lines 4–9", "text")])
    deleted = store.delete_conversation(conv.id)
    assert deleted is not None
    store.restore_conversation(*deleted)
    question, answer = store.messages(conv.id)
    assert [a.id for a in question.attachments] == [PICTURE.id] and answer.citations[0].where == "lines 4–9"
    assert store.image_bytes(PICTURE.id) == b"\x89PNG whole"


def test_a_conversation_put_back_or_imported_leaves_the_documents_list_in_its_order(tmp_path):
    """The Documents list shows the last used first. Undoing a delete, or importing a conversation that names a
    document this computer keeps, attaches nothing anew: the list keeps its order."""
    from app.chat import export
    from app.importing.service import import_file

    store = Store(tmp_path / "c.sqlite3")
    try:
        older, newer = PDF, dataclasses.replace(PDF, id="e" * 64, name="notes.pdf")
        conv = store.create_conversation("t")
        store.add_message(conv.id, "user", "q", attached=[older])
        path = tmp_path / "t.json"
        export.save(path, export.to_json(store.conversation(conv.id), store.messages(conv.id)))
        other = store.create_conversation("u")
        store.add_message(other.id, "user", "q", attached=[newer])
        assert [d.name for d in store.documents()] == ["notes.pdf", "report.pdf"]

        deleted = store.delete_conversation(conv.id)
        assert deleted is not None
        store.restore_conversation(*deleted)
        assert [d.name for d in store.documents()] == ["notes.pdf", "report.pdf"]

        store.delete_conversation(conv.id)
        summary = import_file(store, path)
        assert summary.messages == 1 and summary.attachments_not_found == 0
        assert [d.name for d in store.documents()] == ["notes.pdf", "report.pdf"]

        store.add_message(other.id, "user", "again", attached=[older])  # attached now: first
        assert [d.name for d in store.documents()] == ["report.pdf", "notes.pdf"]
    finally:
        store.close()


def test_rows_written_before_version_8_get_the_figures_their_english_words_held(tmp_path, english):
    """Version 8 keeps an attachment's context budget and a citation's pages or lines as numbers, so the window
    says them in its own language; the migration reads them out of the runtime's English words stored before."""
    path = tmp_path / "v7.sqlite3"
    with sqlite3.connect(str(path)) as db:
        for version, script in enumerate(st.MIGRATIONS[:7], start=1):
            db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;")
        db.execute("INSERT INTO conversations VALUES ('c1', 'Old chat', 1.0, 2.0, '', '{}', 2)")
        db.execute("INSERT INTO messages (id, conversation_id, position, role, content, state, created_at, model) "
                   "VALUES (1, 'c1', 0, 'user', 'what does it say?', 'complete', 1.0, '')")
        db.execute("INSERT INTO messages (id, conversation_id, position, role, content, state, created_at, model, parent_id, depth) "
                   "VALUES (2, 'c1', 1, 'assistant', 'It says 4817.', 'complete', 1.5, 'm', 1, 1)")
        notes = {
            "a" * 64: "larger than half the context (4096 tokens): the parts that share the most words with each question are used "
                      "(an embedding model would also find those that say it in other words)",
            "b" * 64: "larger than half the context (16384 tokens): the parts most related to each question are used",
            "c" * 64: "no model is loaded: its size in tokens is known once one is",
        }
        for ord_, (id_, note) in enumerate(notes.items()):
            db.execute("INSERT INTO attachments (id, kind, name, note, searchable, tokens, added_at, used_at) VALUES (?, 'document', ?, ?, ?, ?, 1, 1)",
                       (id_, f"doc{ord_}.md", note, int(ord_ < 2), 0 if ord_ == 2 else 9_000))
            db.execute("INSERT INTO message_attachments VALUES (1, ?, ?)", (ord_, id_))
        places = ["page 3", "pages 5–6", "line 4", "lines 40–62", "Seite 3"]
        for ord_, place in enumerate(places):
            db.execute("INSERT INTO message_citations VALUES (2, ?, ?, 'doc0.md', ?, ?, 'text')", (ord_, "a" * 64, ord_, place))
    store = Store(path)
    try:
        question, reply = store.messages("c1")
        assert [(a.words_only, a.document_budget) for a in question.attachments] == [(True, 4096), (False, 16384), (False, 0)]
        assert [(c.page, c.last_page, c.first_line, c.last_line) for c in reply.citations] == [
            (3, 3, 0, 0), (5, 6, 0, 0), (0, 0, 4, 4), (0, 0, 40, 62), (0, 0, 0, 0)]
        assert [c.where for c in reply.citations] == places  # the words are kept: an unreadable one is still said as it came
    finally:
        store.close()
