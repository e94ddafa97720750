"""A streaming code block is lexed again only past its settled lines, and ends as a block lexed whole."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument

from app.chat.highlight import HighlightedCode, normalized
from app.chat.widgets.markdown_view import CodeBlock, MarkdownView
from markdown_views import shown_markdown

PYTHON = '''import math


class Calculator:
    """Adds and divides.

    def not_code(self): a docstring's line, not a method
    """

    def add(self, a, b):
        # the sum
        return a + b  # done

    def ratio(self, a, b):
        return f"{a / b:.2f} of {math.pi}"
'''

C = "int main(void) {\n    int x = 1;\n    /* a comment\n       of three\n       lines */\n    return x;\n}\n"


def looks(document: QTextDocument) -> list[tuple[str, str, int, bool, bool]]:
    """Every character with its colour, weight and slant, and whether its line may wrap (a line's end: "\n")."""
    shown = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            shape = fragment.charFormat()
            look = (shape.foreground().color().name(), shape.fontWeight(), shape.fontItalic(), block.blockFormat().nonBreakableLines())
            shown += [(char, *look) for char in fragment.text()]
            it += 1
        block = block.next()
        if block.isValid():
            shown.append(("\n", "", 0, False, False))
    return shown


def lexed_whole(code: str, language: str) -> QTextDocument:
    document = QTextDocument()
    HighlightedCode(document).show(code, language, dark=False, growing=False)
    return document


def test_a_growing_python_block_looks_at_every_step_as_one_lexed_whole(qapp):
    document = QTextDocument()
    code = HighlightedCode(document)
    for end in range(1, len(PYTHON) + 1, 3):
        code.show(PYTHON[:end], "python", dark=False, growing=True)
        assert document.toPlainText() == normalized(PYTHON[:end])
        assert looks(document) == looks(lexed_whole(PYTHON[:end], "python")), f"differs at {PYTHON[:end]!r}"
    # Only what follows the settled lines was lexed again; none is settled inside the docstring.
    assert code.settled == PYTHON.index("        return f")  # the last line, which has no newline yet
    inside_docstring = range(PYTHON.index('"""Adds'), PYTHON.index('    """\n') + 4)
    for end in inside_docstring:
        code.show(PYTHON[:end], "python", dark=False, growing=False)
        code.show(PYTHON[:end + 1], "python", dark=False, growing=True)
        assert code.settled not in inside_docstring[1:]


def test_a_block_that_stops_growing_is_lexed_whole(qapp):
    # C lexes a /* */ comment with one regular expression, so while it is open the lines are settled as code.
    document = QTextDocument()
    code = HighlightedCode(document)
    for end in range(1, len(C) + 1, 2):
        code.show(C[:end], "c", dark=False, growing=True)
        assert document.toPlainText() == normalized(C[:end])
    assert not code.exact
    code.show(C, "c", dark=False, growing=False)
    assert code.exact and looks(document) == looks(lexed_whole(C, "c"))
    shown = looks(document)
    assert shown[C.index("of three")][3] and not shown[C.index("return")][3]  # the comment in italics, as a comment


def test_an_unknown_language_settles_a_line_at_a_time(qapp):
    document = QTextDocument()
    code = HighlightedCode(document)
    text = "first line\nsecond line\nthird"
    code.show(text, "no-such-language", dark=False, growing=True)
    assert document.toPlainText() == text and code.settled == len("first line\nsecond line\n")


def test_a_streaming_reply_grows_its_open_block_and_the_finished_reply_shows_it_exact(qtbot):
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    reply = "Here it is:\n\n```c\n" + C
    for end in range(len("Here it is:\n\n```c\n") + 1, len(reply) + 1, 5):
        view.set_markdown(reply[:end], streaming=True)
    (block,) = view.code_blocks
    assert block.highlighted.settled > 0 and not block.highlighted.exact
    view.set_markdown(reply, streaming=False)  # the reply ended with its fence still open
    assert view.code_blocks == [block] and block.highlighted.exact
    assert looks(block.view.document()) == looks(lexed_whole(C, "c"))
    view.set_markdown(reply + "```\nDone.", streaming=False)
    assert view.code_blocks == [block] and block.view.toPlainText() == normalized(C)


def painted_background(block: CodeBlock) -> str:
    """The colour between the block's language and its Copy button, inside its border."""
    return block.grab().toImage().pixelColor(block.width() // 2, 4).name()


def test_a_code_block_takes_the_other_schemes_colours_when_the_os_switches(qtbot, qapp):
    from app.ui import theme

    palette, sheet = qapp.palette(), qapp.styleSheet()
    was_dark = theme.is_dark()
    theme.apply_scheme(qapp, "dark" if was_dark else "light")  # the app's style sheet, as the window has it
    view = shown_markdown(qtbot, "```python\ndef f():\n    return 1\n```", 500, 200)
    (block,) = view.code_blocks
    before = looks(block.view.document())
    assert painted_background(block) == theme.code_background(was_dark)
    theme.apply_scheme(qapp, "light" if was_dark else "dark")
    try:
        qtbot.waitUntil(lambda: block.highlighted.dark != was_dark, timeout=5_000)
        assert painted_background(block) == theme.code_background(not was_dark)
        assert looks(block.view.document()) != before and block.view.toPlainText() == "def f():\n    return 1"
        theme.apply_scheme(qapp, "dark" if was_dark else "light")
        qtbot.waitUntil(lambda: block.highlighted.dark == was_dark, timeout=5_000)
        assert looks(block.view.document()) == before
        assert painted_background(block) == theme.code_background(was_dark)
    finally:
        qapp.setPalette(palette)
        qapp.setStyleSheet(sheet)


def test_code_in_thinking_grows_while_the_model_thinks_and_is_exact_once_it_has_thought(qtbot):
    from app.chat.widgets.thinking_block import ThinkingBlock

    block = ThinkingBlock(expanded=True)
    qtbot.addWidget(block)
    thought = "Try it:\n\n```c\n" + C
    block.show_reasoning(thought[:-10], thinking=True, thinking_ms=0)
    block.show_reasoning(thought, thinking=True, thinking_ms=0)
    (code,) = block.body.code_blocks
    assert code.highlighted.settled > 0 and not code.highlighted.exact
    block.show_reasoning(thought, thinking=False, thinking_ms=1_200)
    assert code.highlighted.exact and looks(code.view.document()) == looks(lexed_whole(C, "c"))
