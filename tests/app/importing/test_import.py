"""Import: each source's real format (data/README.md says where each came from), duplicates, and bad files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.chat import export
from app.importing import reading
from app.importing import openwebui
from app.importing.conversation import ImportRefused, to_new
from app.importing.service import import_file
from app.storage import store as st
from app.storage.attachments import StoredAttachment, StoredCitation
from app.storage.store import Store

DATA = Path(__file__).parent / "data"


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "c.sqlite3")
    yield s
    s.close()


def by_title(store):
    return {c.title: c for c in store.conversations()}


def contents(store, conv_id):
    return [(m.role, m.content) for m in store.messages(conv_id)]


def test_chatgpt_conversations_json_keeps_its_tree_and_the_branch_shown_last(store):
    summary = import_file(store, DATA / "chatgpt-conversations.json")
    assert summary.format == "ChatGPT" and len(summary.added) == 2 and summary.skipped == 0 and summary.messages == 6
    tea = by_title(store)["Brewing green tea"]
    # current_node was the edited question's reply; the tool turn between them is left out.
    assert contents(store, tea.id) == [("user", "How hot, and for how long?"), ("assistant", "About 80 °C, for two to three minutes.")]
    first, reply = store.messages(tea.id)
    assert (first.branch, first.branches) == (2, 2) and reply.model == "gpt-4o"
    assert store.select_branch(store.siblings(first.id)[0].id)
    assert contents(store, tea.id) == [("user", "How hot should the water be for green tea?"), ("assistant", "About 80 °C: boiling water makes it bitter.")]
    assert tea.created_at == pytest.approx(1714000000.123)


def test_a_second_import_of_the_same_file_skips_every_conversation(store):
    import_file(store, DATA / "chatgpt-conversations.json")
    again = import_file(store, DATA / "chatgpt-conversations.json")
    assert again.added == [] and again.skipped == 2 and again.messages == 0
    assert len(store.conversations()) == 2
    # A conversation deleted since comes back on the next import.
    store.delete_conversation(by_title(store)["Haiku"].id)
    assert len(import_file(store, DATA / "chatgpt-conversations.json").added) == 1


def test_lm_studio_versions_become_siblings(store):
    summary = import_file(store, DATA / "lmstudio.conversation.json")
    assert summary.format == "LM Studio" and summary.messages == 5
    (conv,) = store.conversations()
    assert conv.title == "Rust lifetimes" and conv.system_prompt == "You are a Rust tutor."
    shown = store.messages(conv.id)
    assert [m.content for m in shown] == [
        "What does 'a mean in Rust?", "'a names a lifetime: how long a reference stays valid.", "Show an example.", "fn first<'a>(x: &'a str) -> &'a str { x }",
    ]
    assert (shown[1].branch, shown[1].branches) == (2, 2) and shown[1].model == "qwen2.5-7b-instruct"
    assert conv.created_at == pytest.approx(1721908000.0)


def test_open_webui_history_is_a_tree_with_its_current_leaf(store):
    summary = import_file(store, DATA / "openwebui-chat-export.json")
    assert summary.format == "Open WebUI" and summary.messages == 5
    (conv,) = store.conversations()
    assert [m.content for m in store.messages(conv.id)] == [
        "How often do I feed a sourdough starter?", "Daily if it lives on the counter; weekly in the fridge.", "And the ratio?", "1:1:1 starter, flour and water by weight.",
    ]
    reply = store.messages(conv.id)[1]
    assert (reply.branch, reply.branches) == (2, 2) and [m.content for m in store.siblings(reply.id)][0] == "Once a day at room temperature."


def test_lokal_json_export_round_trips_the_whole_tree(store, tmp_path):
    conv = store.create_conversation("Tree", system_prompt="Be brief.", settings={"temperature": 0.3})
    pdf = StoredAttachment("a" * 64, "document", "report.pdf", "application/pdf", 5_000, tokens=900, pages=2)
    q = store.add_message(conv.id, "user", "q", attached=[pdf])
    a1 = store.add_message(conv.id, "assistant", "a1", state=st.STOPPED)
    store.save_citations(a1.id, [StoredCitation(pdf.id, pdf.name, 0, "page 1", "cited text")])  # the export names both (not the file)
    store.add_message(conv.id, "user", "q2")
    store.set_selected_leaf(conv.id, q.id)
    store.add_message(conv.id, "assistant", "a1b", model="m")
    path = tmp_path / "tree.json"
    on_path = store.messages(conv.id)
    export.save(path, export.to_json(store.conversation(conv.id), on_path, [m for m in store.all_messages(conv.id) if m.id not in {p.id for p in on_path}]))
    exported = json.loads(path.read_text(encoding="utf-8"))
    assert exported["messages"][0]["attachments"][0]["name"] == "report.pdf" and exported["branches"][0]["citations"][0]["where"] == "page 1"
    store.delete_conversation(conv.id)
    summary = import_file(store, path)
    assert summary.format == "Lokal" and summary.messages == 4
    (back,) = store.conversations()
    assert back.system_prompt == "Be brief." and back.settings == {"temperature": 0.3}
    assert [m.content for m in store.messages(back.id)] == ["q", "a1b"]
    assert store.messages(back.id)[0].attachments == [pdf] and summary.attachments_not_found == 0  # the Documents list kept its row
    old = next(m for m in store.all_messages(back.id) if m.content == "a1")
    assert old.state == st.STOPPED and old.id != a1.id
    store.select_branch(old.id)
    assert [m.content for m in store.messages(back.id)] == ["q", "a1", "q2"]


def exported_conversation(store, tmp_path):
    """A conversation with a thinking reply, a question with a document attached and a reply citing it, exported."""
    conv = store.create_conversation("Report")
    pdf = StoredAttachment("b" * 64, "document", "report.pdf", "application/pdf", 5_000, tokens=900, pages=2, fits_whole=True)
    store.add_message(conv.id, "user", "What does it say?", attached=[pdf])
    reply = store.add_message(conv.id, "assistant", "Sales rose.")
    store.update_message(reply.id, reasoning="Page 1 has the table.", thinking_ms=1_250.0)
    store.save_citations(reply.id, [StoredCitation(pdf.id, pdf.name, 3, "page 1", "Sales rose 4%.", 1, 1)])
    path = tmp_path / "report.json"
    export.save(path, export.to_json(store.conversation(conv.id), store.messages(conv.id)))
    return path, pdf


def test_lokal_json_export_round_trips_thinking_attachments_and_citations(tmp_path):
    source = Store(tmp_path / "source.sqlite3")
    path, pdf = exported_conversation(source, tmp_path)
    source.close()
    fresh = Store(tmp_path / "fresh.sqlite3")
    try:
        fresh.remember_attachment(pdf)  # the document is in this Lokal's Documents list: the same computer
        summary = import_file(fresh, path)
        assert summary.messages == 2 and summary.attachments_not_found == 0
        (conv,) = fresh.conversations()
        question, reply = fresh.messages(conv.id)
        assert (reply.reasoning, reply.thinking_ms) == ("Page 1 has the table.", 1_250.0)
        assert (question.reasoning, question.thinking_ms) == ("", 0.0)
        assert question.attachments == [pdf]  # this store's row: its size in tokens too, which the export does not carry
        assert reply.citations == [StoredCitation(pdf.id, "report.pdf", 3, "page 1", "Sales rose 4%.", 1, 1)]  # its page too
    finally:
        fresh.close()


def test_an_attachment_this_computer_does_not_keep_is_left_out_and_counted(store, tmp_path):
    source = Store(tmp_path / "source.sqlite3")
    path, pdf = exported_conversation(source, tmp_path)
    source.close()
    data = json.loads(path.read_text(encoding="utf-8"))
    known = StoredAttachment("c" * 64, "image", "cat.png", "image/png", 300, thumbnail=b"thumb")
    store.remember_attachment(known)
    data["messages"][0]["attachments"].append({"name": "cat.png", "kind": "image", "mime": "image/png", "size": 300, "sha256": known.id})
    path.write_text(json.dumps(data), encoding="utf-8")
    summary = import_file(store, path)
    # The PDF's bytes are not on this computer: linked, it would make every later reply here fail ("not stored here").
    assert summary.messages == 2 and summary.attachments_not_found == 1
    (conv,) = store.conversations()
    question, reply = store.messages(conv.id)
    assert question.content == "What does it say?" and question.attachments == [known]
    assert [a.id for a in store.documents()] == [] and store.image_bytes(pdf.id) is None  # no row for the missing file
    assert reply.reasoning == "Page 1 has the table." and reply.citations[0].text == "Sales rose 4%."  # a citation carries its text


def test_a_version_1_lokal_export_without_ids_is_one_path(store, tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({
        "format": "lokal.conversation/1", "id": "x", "title": "Old", "created_at": 1.0, "updated_at": 2.0, "system_prompt": "", "settings": {},
        "messages": [{"role": "user", "content": "hi", "state": "complete", "created_at": 1.0, "model": "", "stats": None},
                     {"role": "assistant", "content": "hello", "state": "complete", "created_at": 1.5, "model": "m", "stats": {"completion_tokens": 2}}],
    }))
    import_file(store, path)
    (conv,) = store.conversations()
    shown = store.messages(conv.id)
    assert [m.content for m in shown] == ["hi", "hello"] and shown[1].record.stats.completion_tokens == 2


# ---- bad files: a clear error, and nothing imported ------------------------------------------------------
def refused(store, path, match):
    with pytest.raises(ImportRefused, match=match):
        import_file(store, path)
    assert store.conversations() == []
    with sqlite3.connect(str(store.path)) as db:
        assert db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0


def test_a_huge_file_is_refused_before_it_is_read(store, tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(reading.MAX_BYTES + 1)  # sparse: no disk used, but its size is what the import sees
    refused(store, path, r"huge.json is 512 MB; Lokal imports files of up to 512 MB")


def test_deeply_nested_json_is_refused(store, tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    refused(store, path, "nests its JSON too deeply")


def test_a_field_of_the_wrong_type_names_where_it_is_and_nothing_of_the_file_is_imported(store, tmp_path):
    data = json.loads((DATA / "chatgpt-conversations.json").read_text())
    data[1]["mapping"]["a"]["message"]["content"]["parts"] = "not a list"  # the second conversation: the first was fine
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    refused(store, path, r"\[1\]\.mapping\.a\.message\.content\.parts: expected a list, got text")


@pytest.mark.parametrize("field, value, says", [
    ("reasoning", 7, r"\.reasoning: expected text, got a number"),
    ("thinking_ms", -1, r"\.thinking_ms: expected 0 or more, got -1"),
    ("thinking_ms", "long", r"\.thinking_ms: expected a number, got text"),
    ("attachments", ["report.pdf"], r"\.attachments\[0\]: expected an object, got text"),
    ("attachments", [{"name": "report.pdf", "kind": "document", "size": 5}], r"\.attachments\[0\]\.sha256: expected text, got null"),
    ("attachments", [{"name": "a", "kind": "video", "sha256": "d" * 64}], r"\.attachments\[0\]\.kind: 'video' is not one of document, image"),
    ("attachments", [{"name": "a", "kind": "image", "sha256": "d" * 64, "size": -5}], r"\.attachments\[0\]\.size: expected 0 or more"),
    ("citations", [{"name": "report.pdf", "where": "page 1", "chunk": "one", "text": "t", "sha256": "d" * 64}],
     r"\.citations\[0\]\.chunk: expected a number, got text"),
    ("citations", [{"name": "report.pdf", "where": "page 1", "chunk": 0, "sha256": "d" * 64}], r"\.citations\[0\]\.text: expected text, got null"),
    ("citations", [{"name": "report.pdf", "where": "page 1", "chunk": 0, "text": "t", "sha256": "d" * 64, "page": -1}],
     r"\.citations\[0\]\.page: expected 0 or more, got -1"),
])
def test_a_bad_thinking_attachment_or_citation_field_names_where_it_is_and_nothing_is_imported(store, tmp_path, field, value, says):
    path, _ = exported_conversation(store, tmp_path)
    store.delete_conversation(store.conversations()[0].id)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["messages"][1][field] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    refused(store, path, r"^the file\.messages\[1\]" + says)


def test_chatgpt_thoughts_and_their_recap_become_the_thinking_of_the_reply_after_them(store, tmp_path):
    # A reasoning model's export: the user's message, then "thoughts" and "reasoning_recap" nodes, then the reply.
    data = json.loads((DATA / "chatgpt-conversations.json").read_text())
    tea, haiku = data

    def node(parent, children, content):
        return {"parent": parent, "children": children, "message": {"author": {"role": "assistant"}, "create_time": 1.0, "content": content}}

    haiku["mapping"]["q"]["children"] = ["th"]
    haiku["mapping"]["th"] = node("q", ["rc"], {"content_type": "thoughts", "source_analysis_msg_id": "x", "thoughts": [
        {"summary": "Picking an image", "content": "Rain on a roof, and a kettle.", "chunks": [], "finished": True},
        {"summary": [{"type": "summary", "text": "a shape this reader does not know"}], "content": ""},
    ]})
    haiku["mapping"]["rc"] = node("th", ["a"], {"content_type": "reasoning_recap", "content": "Thought for 1m 5s"})
    haiku["mapping"]["a"]["parent"] = "rc"
    tea["mapping"]["u1b"]["children"] = ["th2"]  # thinking, then a tool call, then the reply
    tea["mapping"]["th2"] = node("u1b", ["t1"], {"content_type": "thoughts", "thoughts": [{"summary": "Reading the photo", "content": "A teapot."}]})
    tea["mapping"]["t1"]["parent"] = "th2"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    import_file(store, path)
    with sqlite3.connect(str(store.path)) as db:
        stored = {content: (reasoning, thinking_ms) for content, reasoning, thinking_ms in db.execute("SELECT content, reasoning, thinking_ms FROM messages")}
    poem = next(content for content in stored if content.startswith("Soft rain"))
    assert stored[poem] == ("**Picking an image**\n\nRain on a roof, and a kettle.", 65_000.0)
    assert stored["About 80 °C, for two to three minutes."] == ("**Reading the photo**\n\nA teapot.", 0.0)
    assert stored["About 80 °C: boiling water makes it bitter."] == ("", 0.0)
    assert len(stored) == 6, "a thinking node became a message of its own"  # the four of the tea, the two of the haiku


def test_lm_studio_thinking_steps_become_the_thinking_of_their_reply(store, tmp_path):
    # A reasoning model's reply: a thinking step (its time in its title), a tool's status, then the answer.
    data = json.loads((DATA / "lmstudio.conversation.json").read_text())
    last = data["messages"][3]["versions"][0]
    answer = last["steps"][0]
    last["steps"] = [
        {"type": "contentBlock", "style": {"type": "thinking", "ended": True, "title": "Thought for 1 minute 2.5 seconds"},
         "content": [{"type": "text", "text": "They want a function with one lifetime."}], "prefix": "<think>", "suffix": "</think>"},
        {"type": "toolStatus", "statusState": {}},
        answer,
        {"type": "debugInfoBlock", "debugInfo": "Conversation naming technique: 'prompt'"},
    ]
    first = data["messages"][1]["versions"][1]  # thought, with no time said
    first["steps"].insert(0, {"type": "contentBlock", "style": {"type": "thinking", "ended": True, "title": "Thinking"},
                              "content": [{"type": "text", "text": "A lifetime question."}]})
    path = tmp_path / "rust.conversation.json"
    path.write_text(json.dumps(data))
    import_file(store, path)
    (conv,) = store.conversations()
    shown = store.messages(conv.id)
    assert [m.content for m in shown] == [
        "What does 'a mean in Rust?", "'a names a lifetime: how long a reference stays valid.", "Show an example.", "fn first<'a>(x: &'a str) -> &'a str { x }",
    ]
    assert (shown[3].reasoning, shown[3].thinking_ms) == ("They want a function with one lifetime.", 62_500.0)
    assert (shown[1].reasoning, shown[1].thinking_ms) == ("A lifetime question.", 0.0)
    assert (shown[0].reasoning, shown[2].reasoning) == ("", "")


@pytest.mark.parametrize("style, says", [
    ("thinking", r"\.steps\[0\]\.style: expected an object, got text"),
    ({"type": 3}, r"\.steps\[0\]\.style\.type: expected text, got a number"),
    ({"type": "thinking", "title": ["Thought for 2 seconds"]}, r"\.steps\[0\]\.style\.title: expected text, got a list"),
])
def test_a_bad_lm_studio_step_style_names_where_it_is_and_nothing_is_imported(store, tmp_path, style, says):
    data = json.loads((DATA / "lmstudio.conversation.json").read_text())
    data["messages"][3]["versions"][0]["steps"][0]["style"] = style
    path = tmp_path / "bad.conversation.json"
    path.write_text(json.dumps(data))
    refused(store, path, r"^the file\.messages\[3\]\.versions\[0\]" + says)


def test_open_webui_replies_that_thought_import_their_thinking_apart_from_the_answer(store, tmp_path):
    # Open WebUI folds a reply's thinking into its content (openwebui.py says how); newer versions escape it after quoting.
    data = json.loads((DATA / "openwebui-chat-export.json").read_text())
    messages = data[0]["chat"]["history"]["messages"]
    messages["m-bot-1"]["content"] = (
        '<details type="reasoning" done="true" duration="13">\n<summary>Thought for 13 seconds</summary>\n'
        "&gt; A starter needs food &amp; warmth.\n&gt; \n&gt; Say &lt;once&gt; a day.\n</details>\nOnce a day at room temperature."
    )
    messages["m-bot-3"]["content"] = (
        '\n<details type="reasoning" done="true" duration="2">\n<summary>Thought for 2 seconds</summary>\n> By weight, equal parts.\n</details>\n'
        '<details type="reasoning" done="true" duration="1">\n<summary>Thought for 1 seconds</summary>\n> Yes: 1:1:1 & no more.\n</details>\n'
        "1:1:1 starter, flour and water by weight."
    )
    messages["m-user-2"]["content"] = '<details type="reasoning">a user\'s own text is left as written</details>'
    path = tmp_path / "chat-export.json"
    path.write_text(json.dumps(data))
    import_file(store, path)
    with sqlite3.connect(str(store.path)) as db:  # every branch's messages, the one shown and the other
        stored = {content: (reasoning, thinking_ms) for content, reasoning, thinking_ms in db.execute("SELECT content, reasoning, thinking_ms FROM messages")}
    assert stored["Once a day at room temperature."] == ("A starter needs food & warmth.\n\nSay <once> a day.", 13_000.0)
    assert stored["1:1:1 starter, flour and water by weight."] == ("By weight, equal parts.\n\nYes: 1:1:1 & no more.", 3_000.0)
    assert stored['<details type="reasoning">a user\'s own text is left as written</details>'] == ("", 0.0)
    assert stored["Daily if it lives on the counter; weekly in the fridge."] == ("", 0.0)


def test_an_open_webui_chat_that_thought_is_skipped_if_a_lokal_before_its_thinking_was_read_apart_imported_it(store, tmp_path):
    # Lokal before 1ccc0d9 kept a reply's <details type="reasoning"> block in its answer, and keyed the chat by that.
    data = json.loads((DATA / "openwebui-chat-export.json").read_text())
    data[0]["chat"]["history"]["messages"]["m-bot-1"]["content"] = (
        '<details type="reasoning" done="true" duration="3">\n<summary>Thought for 3 seconds</summary>\n> Warmth.\n</details>\nOnce a day.'
    )
    path = tmp_path / "chat-export.json"
    path.write_text(json.dumps(data))
    (chat,) = openwebui.read(data)
    for m in chat.messages:  # read as that Lokal read it: the content whole, no thinking
        m.content, m.reasoning, m.thinking_ms, m.keyed_as = m.keyed_as or m.content, "", 0.0, None
    store.add_conversations([to_new(chat)])

    summary = import_file(store, path)
    assert (len(summary.added), summary.skipped) == (0, 1)
    assert len(store.conversations()) == 1

    store.delete_conversation(store.conversations()[0].id)  # gone: importing brings it back, its thinking read apart
    summary = import_file(store, path)
    assert (len(summary.added), summary.skipped) == (1, 0)
    assert import_file(store, path).skipped == 1  # and the same import again adds nothing


def test_a_cycle_of_parents_is_refused(store, tmp_path):
    data = json.loads((DATA / "openwebui-chat-export.json").read_text())
    messages = data[0]["chat"]["history"]["messages"]
    messages["m-user-1"]["parentId"] = "m-bot-3"  # no first message any more: every message is in the loop
    path = tmp_path / "chat-export.json"
    path.write_text(json.dumps(data))
    refused(store, path, "5 messages form a cycle")


def test_a_missing_parent_is_refused(store, tmp_path):
    data = json.loads((DATA / "openwebui-chat-export.json").read_text())
    data[0]["chat"]["history"]["messages"]["m-user-2"]["parentId"] = "nowhere"
    path = tmp_path / "chat-export.json"
    path.write_text(json.dumps(data))
    refused(store, path, "names a parent 'nowhere' that is not in the conversation")


def test_files_that_are_not_json_or_not_an_export_are_refused(store, tmp_path):
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\xff\xfe not text")
    refused(store, garbage, "is not UTF-8 text")
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "lokal.conversation/1", "messages": [')
    refused(store, broken, r"is not JSON: .* \(line 1")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": "world"}))
    refused(store, other, "is not a conversation export Lokal knows")
    bad_role = tmp_path / "role.json"
    bad_role.write_text(json.dumps({"format": "lokal.conversation/1", "messages": [{"role": "wizard", "content": "x"}]}))
    refused(store, bad_role, r"the file\.messages\[0\]\.role: 'wizard' is not one of system, user, assistant")


def test_a_write_that_fails_midway_leaves_nothing(store, tmp_path):
    """The store's transaction: a conversation that fails to write takes the ones before it back out."""
    data = json.loads((DATA / "chatgpt-conversations.json").read_text())
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    with sqlite3.connect(str(store.path)) as db:  # the second conversation's insert is refused by the database itself
        db.execute("CREATE TRIGGER no_haiku BEFORE INSERT ON conversations WHEN NEW.title = 'Haiku' BEGIN SELECT RAISE(ABORT, 'refused'); END")
    with pytest.raises(st.StoreUnavailable, match="refused"):
        import_file(store, path)
    assert store.conversations() == []
