"""A reply is text a model wrote: the window renders it as inert text (issue #27, "Model replies rendered as HTML").

Raw HTML is shown as typed, never interpreted; an image the reply names is never fetched, from disk
or the network, but shown as the words "[image: …]". The real MarkdownView, offscreen, painted.

That no file is read is seen from outside Qt: the images point at a FIFO, and a writer in another
process notes when anything opens it to read (opening a FIFO waits for the other end, so the writer
learns of every reader, and its data then ends the read: a view that does read it does not hang).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QTextDocument

from app.chat.widgets.markdown_view import AutoHeightBrowser, CodeBlock, MarkdownView

# Serves each reader of the FIFO in turn, noting it in `opened`, until the test itself is the reader (`closing`).
FIFO_WRITER = r"""
import os, sys
fifo, opened, closing = sys.argv[1:4]
while True:
    with open(fifo, "wb") as end:
        if os.path.exists(closing):
            break
        open(opened, "w").close()
        end.write(b"GIF89a")
"""


class GuardedFifo:
    """A FIFO that must never be opened, and a record of whether it was."""

    def __init__(self, folder: Path):
        self.path = folder / "must-not-be-read.png"
        self._opened = folder / "opened"
        self._closing = folder / "closing"
        os.mkfifo(self.path)
        self._writer = subprocess.Popen([sys.executable, "-c", FIFO_WRITER, str(self.path), str(self._opened), str(self._closing)])

    @property
    def was_opened(self) -> bool:
        return self._opened.exists()

    def close(self) -> None:
        self._closing.touch()
        reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer's open return
        try:
            self._writer.wait(timeout=30)
        finally:
            os.close(reader)


@pytest.fixture
def fifo(tmp_path):
    guarded = GuardedFifo(tmp_path)
    yield guarded
    guarded.close()


def shown(qtbot, text: str) -> MarkdownView:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.set_markdown(text)
    view.show()
    qtbot.waitExposed(view)
    view.grab()  # painted: every image the documents hold has been asked for by now
    return view


def browsers(view: MarkdownView) -> list[AutoHeightBrowser]:
    return [w for kind, w, _t in view._parts if kind == "text"]


def fragments(document: QTextDocument):
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            yield it.fragment()
            it += 1
        block = block.next()


def test_html_and_images_in_a_reply_are_shown_as_text_and_no_file_is_read(qtbot, fifo):
    target = str(fifo.path)
    reply = "\n\n".join(
        [
            f"Markdown image: ![a picture]({target}) end.",
            f"Its file URL: ![a picture](file://{target}) end.",
            f'HTML image: <img src="{target}"> end.',
            f'A huge one: <img src="file://{target}" width="100000" height="100000"> end.',
            '<a href="file:///etc/passwd">a file link</a> end.',
            "<script>alert(1)</script> end.",
            "<div>\n<b>bold?</b>\n</div>",
        ]
    )
    view = shown(qtbot, reply)
    assert not fifo.was_opened, "the view opened a file a reply named"
    text = "\n".join(b.toPlainText() for b in browsers(view))
    for raw in (f'<img src="{target}">', f'width="100000" height="100000">', '<a href="file:///etc/passwd">', "<script>alert(1)</script>", "<b>bold?</b>"):
        assert raw in text, f"{raw!r} is not shown as typed"
    assert f"[image: {target}]" in text and f"[image: file://{target}]" in text
    for browser in browsers(view):
        for fragment in fragments(browser.document()):
            assert not fragment.charFormat().isImageFormat(), "an image is left in the document"
            assert not fragment.charFormat().anchorHref().startswith("file:"), "a file link came from raw HTML"


def test_an_image_of_dev_zero_or_a_data_url_renders_as_text(qtbot):
    # /dev/zero never ends: a view that read it would hang (and did, each time the conversation opened).
    # A data: URL is decoded by Qt itself unless loadResource answers first: a 30000x30000 PNG header here.
    png = "iVBORw0KGgoAAAANSUhEUgAAdTAAAHUwCAIAAADpRW/tAAAAEUlEQVR4nGNgGAWjYBQMdwAAA+gAAbOm00YAAAAASUVORK5CYII="
    view = shown(qtbot, f"![zero](/dev/zero)\n\n![bomb](data:image/png;base64,{png})")
    text = "\n".join(b.toPlainText() for b in browsers(view))
    assert "[image: /dev/zero]" in text and "[image: data:image/png;base64," in text


def test_tables_and_highlighted_code_still_render(qtbot):
    view = shown(qtbot, "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~ and **bold**\n\n```python\ndef f():\n    return 1\n```")
    table_browser, prose, *_ = browsers(view)
    assert table_browser.document().rootFrame().childFrames(), "the table was not rendered as a table"
    assert "gone" in prose.toPlainText() and "~~" not in prose.toPlainText()
    (code,) = view.code_blocks
    assert isinstance(code, CodeBlock) and code.view.toPlainText().startswith("def f():")
    assert "color" in code.view.toHtml()  # Pygments' colours survive
