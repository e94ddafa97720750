"""Markdown splitting, code highlighting, exports, and the widgets that show them."""

from __future__ import annotations

import json

from PySide6.QtGui import QGuiApplication

from app.chat import export, markdown
from app.chat.widgets.markdown_view import MarkdownView
from app.storage.attachments import StoredAttachment, StoredCitation
from app.storage.store import Store
from markdown_views import shown_markdown

REPLY = "# Plan\n\n1. one\n2. two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\ndef f():\n    return 1\n```\nDone."


def test_split_keeps_code_blocks_whole_and_an_open_fence_is_code_already():
    kinds = [(s.kind, s.language) for s in markdown.split(REPLY)]
    assert kinds == [("text", ""), ("text", ""), ("text", ""), ("code", "python"), ("text", "")]
    streaming = markdown.split("Here:\n\n```js\nlet x = 1")
    assert streaming[-1].kind == "code" and streaming[-1].text == "let x = 1" and not streaming[-1].closed


def test_single_newlines_are_line_breaks_but_lists_and_tables_stay_blocks():
    (poem,) = markdown.split("Roses are red,\nviolets are blue")
    assert poem.text == "Roses are red,  \nviolets are blue"
    (items,) = markdown.split("Fruits:\n- apple\n- pear")
    assert items.text == "Fruits:\n- apple\n- pear"
    (table,) = markdown.split("| a |\n|---|\n| 1 |")
    assert table.text == "| a |\n|---|\n| 1 |"


def test_markdown_view_renders_headings_lists_tables_and_highlighted_code(qtbot):
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.set_markdown(REPLY)
    html = "".join(w.toHtml() for kind, w, _t in view._parts if kind == "text")
    assert "Plan" in html and "<table" in html and "<li" in html
    (block,) = view.code_blocks
    assert block.language_label.text() == "python"
    assert "style=" in block.view.toHtml() and "def" in block.view.toPlainText()  # coloured by Pygments
    block.copy_button.click()
    assert QGuiApplication.clipboard().text() == "def f():\n    return 1"


def test_streaming_updates_only_the_last_segment(qtbot):
    view = MarkdownView()
    qtbot.addWidget(view)
    view.set_markdown("First paragraph.\n\nSecond", streaming=True)
    first_widget = view._parts[0][1]
    view.set_markdown("First paragraph.\n\nSecond paragraph grows", streaming=True)
    assert view._parts[0][1] is first_widget and len(view._parts) == 2


def test_export_markdown_and_json(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("Plans", system_prompt="Be brief.", settings={"temperature": 0.2})
    store.add_message(conv.id, "user", "Hi")
    store.add_message(conv.id, "assistant", "Hello!\n\n```py\nx = 1\n```", state="stopped")
    conv, messages = store.conversation(conv.id), store.messages(conv.id)
    md = export.to_markdown(conv, messages)
    assert md.startswith("# Plans\n") and "> Be brief." in md and "## You\n\nHi" in md and "## Assistant (stopped)" in md and "```py\nx = 1\n```" in md
    data = json.loads(export.to_json(conv, messages))
    assert data["format"] == "lokal.conversation/1" and data["settings"] == {"temperature": 0.2}
    assert [(m["role"], m["state"]) for m in data["messages"]] == [("user", "complete"), ("assistant", "stopped")]


def test_export_keeps_a_replys_thinking_apart_from_its_answer(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("Sums")
    store.add_message(conv.id, "user", "2 + 2?")
    reply = store.add_message(conv.id, "assistant", "4")
    store.update_message(reply.id, reasoning="Two and two.\nThat makes four.", thinking_ms=12_400.0)
    conv, messages = store.conversation(conv.id), store.messages(conv.id)
    md = export.to_markdown(conv, messages)
    assert "<details>\n<summary>Thought for 12 s</summary>\n\n> Two and two.\n> That makes four.\n\n</details>\n\n4\n" in md
    data = json.loads(export.to_json(conv, messages))
    answer = data["messages"][1]
    assert (answer["content"], answer["reasoning"], answer["thinking_ms"]) == ("4", "Two and two.\nThat makes four.", 12_400.0)
    assert data["messages"][0]["reasoning"] == ""


def test_export_names_a_messages_attachments_and_a_replys_citations_without_the_files(tmp_path):
    store = Store(tmp_path / "c.sqlite3")
    conv = store.create_conversation("Logbook")
    pdf = StoredAttachment("a" * 64, "document", "log_book.pdf", "application/pdf", 52_000, tokens=9_000, pages=8)
    picture = StoredAttachment("b" * 64, "image", "harbour.png", "image/png", 2_048, thumbnail=b"\x89PNG thumbnail", image=b"\x89PNG whole picture")
    store.add_message(conv.id, "user", "What is the code?", attached=[pdf, picture])
    reply = store.add_message(conv.id, "assistant", "It is 4817.")
    store.save_citations(reply.id, [StoredCitation(pdf.id, pdf.name, 7, "page 3", "The code is 4817.", 3, 3), StoredCitation(pdf.id, pdf.name, 2, "pages 5–6", "Gulls.", 5, 6)])
    conv, messages = store.conversation(conv.id), store.messages(conv.id)

    md = export.to_markdown(conv, messages)
    assert "What is the code?\n\n**Attached:** log\\_book.pdf, harbour.png\n" in md
    assert "It is 4817.\n\n**Sources:** log\\_book.pdf — page 3; log\\_book.pdf — pages 5–6\n" in md

    data = json.loads(export.to_json(conv, messages))
    question, answer = data["messages"]
    assert question["attachments"] == [
        {"name": "log_book.pdf", "kind": "document", "mime": "application/pdf", "size": 52_000, "sha256": "a" * 64},
        {"name": "harbour.png", "kind": "image", "mime": "image/png", "size": 2_048, "sha256": "b" * 64},
    ]
    assert answer["citations"] == [
        {"name": "log_book.pdf", "where": "page 3", "chunk": 7, "text": "The code is 4817.", "sha256": "a" * 64,
         "page": 3, "last_page": 3, "first_line": 0, "last_line": 0},
        {"name": "log_book.pdf", "where": "pages 5–6", "chunk": 2, "text": "Gulls.", "sha256": "a" * 64,
         "page": 5, "last_page": 6, "first_line": 0, "last_line": 0},
    ]
    assert (question["citations"], answer["attachments"]) == ([], [])
    assert "PNG" not in export.to_json(conv, messages)  # neither the picture nor its thumbnail


def test_a_code_line_wider_than_its_block_scrolls_sideways_and_the_block_makes_room_for_the_bar(qtbot):
    wide = "result = compute(" + ", ".join(f"argument_{i}={i}" for i in range(30)) + ")"
    view = shown_markdown(qtbot, f"```python\n{wide}\nprint(result)\n```\n\n```python\nx = 1\n```", 600, 400)
    long_block, short_block = view.code_blocks
    bar = long_block.view.horizontalScrollBar()
    assert bar.isVisible() and bar.maximum() > 0  # the end of the line can be scrolled to, not cut off
    assert long_block.view.viewport().height() >= long_block.view.document().size().height()  # both lines above the bar
    assert not short_block.view.horizontalScrollBar().isVisible()
    assert short_block.view.height() == int(short_block.view.document().size().height()) + 2


def test_a_code_block_without_a_language_is_labelled_code_and_a_named_one_by_its_language(qtbot, english):
    view = MarkdownView()
    qtbot.addWidget(view)
    view.set_markdown("```\nplain text\n```\n\n```rust\nfn main() {}\n```")
    unnamed, rust = view.code_blocks
    assert (unnamed.language_label.text(), rust.language_label.text()) == ("code", "rust")
    assert unnamed.view.toPlainText() == "plain text" and rust.view.accessibleDescription() == "Code (rust)"


WIDE_TABLE = (
    "| Model | Parameters | Context | Quantization | File | Speed | Memory | Licence | Link |\n|" + "---|" * 9 + "\n"
    + "| Qwen2.5-Coder-1.5B-Instruct | 1.5B | 32768 | Q4_K_M | qwen2.5-coder-1.5b-instruct-q4_k_m.gguf | 24 tok/s | 1.1 GB | Apache-2.0 "
    "| https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF |\n"
)


def test_a_wide_table_keeps_its_words_whole_and_scrolls_sideways_from_its_first_column(qtbot):
    from PySide6.QtGui import QTextTable

    view = shown_markdown(qtbot, "Here:\n\n" + WIDE_TABLE + "\nA long address in prose still fits: https://huggingface.co/" + "a" * 120, 420, 400)
    _, table_view, prose = (widget for _kind, widget, _text in view._parts)
    (table,) = [frame for frame in table_view.document().rootFrame().childFrames() if isinstance(frame, QTextTable)]
    for column in range(table.columns()):  # each heading on one line: "Parameters", not "Parameter" and "s"
        heading = table.cellAt(0, column).firstCursorPosition().block()
        assert heading.layout().lineCount() == 1, heading.text()
    bar = table_view.horizontalScrollBar()
    assert bar.isVisible() and bar.maximum() > 0 and bar.value() == 0  # the first column shows first
    assert table_view.viewport().height() >= table_view.document().size().height()
    assert not prose.horizontalScrollBar().isVisible()  # prose still breaks a long word to fit


def test_a_code_line_and_a_table_scroll_on_slim_bars_under_the_apps_style_sheet(qtbot, qapp):
    from app.ui import theme

    palette, sheet = qapp.palette(), qapp.styleSheet()
    theme.apply_scheme(qapp, "dark" if theme.is_dark() else "light")
    try:
        view = shown_markdown(qtbot, "Here:\n\n" + WIDE_TABLE + "\n```\n" + "x" * 300 + "\n```", 420, 400)
        _, table_view, code = (widget for _kind, widget, _text in view._parts)
        for bar in (table_view.horizontalScrollBar(), code.view.horizontalScrollBar()):
            assert bar.isVisible() and bar.height() == 12  # QScrollBar#slimScroll:horizontal (app/ui/theme.py)
    finally:
        qapp.setPalette(palette)
        qapp.setStyleSheet(sheet)


def test_a_code_blocks_header_names_its_language_at_the_left_and_copy_at_the_right_above_the_code(qtbot):
    view = shown_markdown(qtbot, "```python\nx = 1\n```", 500, 300)
    (block,) = view.code_blocks
    label, button, code = block.language_label.geometry(), block.copy_button.geometry(), block.view.geometry()
    assert label.left() < 20 and block.width() - 20 < button.right() < block.width()
    assert label.bottom() < code.top() and button.bottom() < code.top() and code.bottom() < block.height()
    assert abs(label.center().y() - button.center().y()) <= 1  # on one line
