"""Syntax highlighting of code blocks with Pygments, as inline-styled HTML Qt can show."""

from __future__ import annotations

import functools
import html

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

LIGHT_STYLE = "friendly"
DARK_STYLE = "monokai"


@functools.cache
def _formatter(dark: bool) -> HtmlFormatter:
    return HtmlFormatter(style=DARK_STYLE if dark else LIGHT_STYLE, noclasses=True, nowrap=True)


@functools.cache
def _lexer(language: str) -> Lexer | None:
    try:
        return get_lexer_by_name(language) if language else None
    except ClassNotFound:
        return None


def to_html(code: str, language: str, dark: bool) -> str:
    # No guessing for an unnamed language: guess_lexer tries every lexer, too slow to run per streamed batch.
    lexer = _lexer(language.lower())
    body = highlight(code, lexer, _formatter(dark)) if lexer is not None else html.escape(code)
    return f'<pre style="margin:0; white-space:pre;">{body}</pre>'


def background(dark: bool) -> str:
    return "#272822" if dark else "#f6f8fa"
