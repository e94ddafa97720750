"""A finished reply's prose paragraphs in one view: fewer widgets, the same look as while it streamed, nothing lost.

Paragraphs get a view each only while a reply streams (so a flush re-renders its last one). A reply shown whole
groups them (app/chat/markdown.grouped); bench/long_reply.py measures what that saves.
"""

from __future__ import annotations

import pytest

from app.chat import markdown
from app.chat.markdown import PARAGRAPH_MARK
from app.chat.widgets.markdown_view import MarkdownView
from markdown_views import shown_markdown

REPLY = """## Reading a CSV

Use the standard library's `csv` module:

1. Open the file.
2. Sum the column.

```python
import csv
```

| Approach | Good for |
|---|---|
| csv | small files |

A poem's lines keep their breaks:
The wind whispers,
a mystic realm.

1. a loose list's first item

2. and its second, numbered on

> a quote

### Last

Done."""


@pytest.fixture
def shown(qtbot):
    def show(text: str, streaming: bool) -> MarkdownView:
        return shown_markdown(qtbot, text, 700, 200, streaming)

    return show


def prose(view: MarkdownView) -> str:
    return "\n".join(widget.toPlainText() for kind, widget, _text in view._parts if kind == "text")


def test_paragraphs_are_grouped_between_code_blocks_and_tables():
    kinds = [(s.kind, s.text.count(PARAGRAPH_MARK)) for s in markdown.grouped(markdown.split(REPLY))]
    assert kinds == [("text", 2), ("code", 0), ("text", 0), ("text", 5)]  # prose, code, the table alone, the six paragraphs after it


def test_a_reply_shown_whole_has_a_view_per_run_of_prose_and_reads_as_it_did_streaming(shown):
    streamed = shown(REPLY, streaming=True)
    whole = shown(REPLY, streaming=False)
    assert len(whole._parts) == 4 < len(streamed._parts) == 11
    assert whole.sizeHint().height() == streamed.sizeHint().height()  # paragraphs as far apart in one view as in two
    assert PARAGRAPH_MARK not in prose(whole)
    assert prose(whole).split("\n") == prose(streamed).split("\n")  # every line, in order; the poem's lines kept apart


def test_a_loose_list_keeps_its_numbers_when_grouped(shown):
    whole = shown("Steps:\n\n1. first\n\n2. second\n\n3. third", streaming=False)
    (only,) = [w for k, w, _t in whole._parts if k == "text"]
    block, labels = only.document().begin(), []
    while block.isValid():
        if block.textList():
            labels.append(block.textList().itemText(block))
        block = block.next()
    assert labels == ["1.", "2.", "3."]


def test_a_reply_that_streamed_keeps_its_views_when_it_ends(shown):
    view = shown(REPLY[:200], streaming=True)
    view.set_markdown(REPLY, streaming=True)
    parts = [widget for _k, widget, _t in view._parts]
    view.set_markdown(REPLY, streaming=False)  # the last flush: nothing moves, nothing is made again
    assert [widget for _k, widget, _t in view._parts] == parts
