"""Syntax highlighting of code blocks with Pygments, written into a QTextDocument a token at a time.

A streaming reply's code block grows at every flush. Lexed and laid out whole each time (HTML through
setHtml), a block of 400 lines cost the window 30-40 ms a flush, CPU a model decoding on the same cores
loses. So a growing block keeps the lines it has settled and lexes only what follows them again: a line is
settled where its newline comes out of the lexer as plain text, which is where Pygments' lexers are back in
their root state (a newline inside a string or a comment is lexed as string or comment). A lexer that matches
a construct in one regular expression (C's /* */) can leave it miscoloured while it is open: the finished
block is lexed whole once more, so what stays on screen is exact.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import Token, _TokenType
from pygments.util import ClassNotFound
from PySide6.QtGui import QColor, QFont, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument

LIGHT_STYLE = "friendly"
DARK_STYLE = "monokai"
FONT_FAMILIES = ["monospace"]


@functools.cache
def _lexer(language: str) -> Lexer | None:
    try:
        # stripnl off: a growing block is lexed from a settled line on, and the blank lines there are its own
        return get_lexer_by_name(language, stripnl=False) if language else None
    except ClassNotFound:
        return None


def normalized(code: str) -> str:
    """What the block shows: newlines as Pygments makes them, without the blank lines around the code."""
    return code.replace("\r\n", "\n").replace("\r", "\n").strip("\n")


def tokens(code: str, language: str) -> Iterator[tuple[_TokenType, str]]:
    """`code` (normalized) as Pygments lexes it from its root state; plain text where the language is unknown.

    No guessing for an unnamed language: guess_lexer tries every lexer, too slow to run per streamed batch."""
    lexer = _lexer(language.lower())
    if lexer is None:
        yield from ((Token.Text, line) for line in code.splitlines(keepends=True))  # a line at a time, so each settles
        return
    left = len(code)  # the lexer ends the text with a newline of its own
    for ttype, value in lexer.get_tokens(code):
        if left <= 0:
            return
        yield ttype, value[:left]
        left -= len(value)


@functools.cache
def char_format(ttype: _TokenType, dark: bool) -> QTextCharFormat:
    look = get_style_by_name(DARK_STYLE if dark else LIGHT_STYLE).style_for_token(ttype)
    shape = QTextCharFormat()
    shape.setFontFamilies(FONT_FAMILIES)
    if look["color"]:
        shape.setForeground(QColor("#" + look["color"]))
    if look["bgcolor"]:
        shape.setBackground(QColor("#" + look["bgcolor"]))
    if look["bold"]:
        shape.setFontWeight(QFont.Weight.Bold)
    if look["italic"]:
        shape.setFontItalic(True)
    if look["underline"]:
        shape.setFontUnderline(True)
    return shape


class HighlightedCode:
    """The code shown in a QTextDocument, highlighted; `show` with growing=True lexes only past the settled lines."""

    def __init__(self, document: QTextDocument):
        self.document = document
        self.code = ""  # normalized
        self.language = ""
        self.dark = False
        self.exact = True  # the whole of `code` was lexed in one go
        self._settled = 0  # characters of `code` whose formatting will not change while it grows
        self._settled_at = 0  # where they end in the document

    @property
    def settled(self) -> int:
        """Characters of `code` a growing block will not lex again."""
        return self._settled

    def show(self, code: str, language: str, dark: bool, growing: bool) -> None:
        code = normalized(code)
        same_look = (language, dark) == (self.language, self.dark)
        if same_look and code == self.code and (growing or self.exact):
            return
        resume = growing and same_look and code.startswith(self.code[: self._settled])
        start, start_at = (self._settled, self._settled_at) if resume else (0, 0)
        self.code, self.language, self.dark, self.exact = code, language, dark, not growing
        if not start_at:
            self.document.clear()
        cursor = QTextCursor(self.document)
        cursor.beginEditBlock()
        if start_at:
            cursor.setPosition(start_at)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
        else:
            lines = QTextBlockFormat()
            lines.setNonBreakableLines(True)  # as <pre>: a long line scrolls, it does not wrap
            cursor.setBlockFormat(lines)
        self._settled, self._settled_at = start, start_at
        done = start
        for ttype, value in tokens(code[start:], language):
            cursor.insertText(value, char_format(ttype, dark))
            done += len(value)
            if growing and value.endswith("\n") and ttype in Token.Text:
                self._settled, self._settled_at = done, cursor.position()
        cursor.endEditBlock()
