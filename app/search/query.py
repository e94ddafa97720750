"""Search through every message: the FTS5 query, built from what the user typed, and one page of hits.

Qt-free, so the benchmark (bench/search_speed.py) and the search worker run the same code. The index is
`message_search` (app/storage/store.py, migration 2 -> 3): every row of the messages table, every branch
of every conversation, kept in step by triggers.

What the user types is never FTS5 syntax: each word becomes a quoted phrase (a `"` inside is doubled), so
`"`, `AND (`, `NEAR(` or `title:` are words to look for, never an error. Words are ANDed, as in every
search box, and the last word (of two characters or more) also matches as a prefix while it is being typed
("pyth" finds "python").

Hits come a page at a time (keyset paging on the message id), in two runs: the messages with the words as
typed, newest first, then those where the last word only begins a longer one ("tomato", then "tomatoes"),
newest first. FTS5 walks a word's list in rowid order and stops at the page's end, so the first page of a
common word costs the same on 500,000 messages as on 500; a prefix, though, it merges from every word that
begins with it before the first hit comes (the index keeps that ready for prefixes of 2 and 3 characters
only), so it runs only once the whole-word hits are all shown, where it usually has little to merge (a long
prefix is rare; a common one is a whole word, and fills the first pages). Ranking by bm25 instead would
score every match before the first one shows.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from dataclasses import dataclass

from app.storage import pending_imports

MARK_START = "\x02"  # around a match in a snippet: the view turns them into highlighting after escaping the text
MARK_END = "\x03"
ELLIPSIS = "…"
SNIPPET_TOKENS = 16  # words of context in a snippet (FTS5 allows at most 64)
PAGE = 50
MAX_WORDS = 16  # more words than anyone types: the rest is ignored rather than built into a huge query
INDEXED_PREFIX = 3  # the longest prefix the index keeps a list for (prefix='2 3' in the migration)
WITHIN_BATCH = 200  # candidates read at a time by the prefix run within one conversation
MIN_PREFIX = 2  # a last word of one character is looked for as a word only: as a prefix it would match nearly everything


@dataclass(frozen=True)
class Cursor:
    """Where the next page starts: in the whole-word run (0) or the prefix run (1), below message `before_id`."""

    run: int = 0
    before_id: int = 2**63 - 1  # SQLite's largest integer: from the newest


@dataclass(frozen=True)
class Page:
    hits: list["Hit"]
    next: Cursor | None  # None: there is no more


@dataclass(frozen=True)
class Hit:
    """One message that matches: where it is, and a snippet with the matches between MARK_START and MARK_END."""

    message_id: int
    conversation_id: str
    title: str
    role: str
    created_at: float
    snippet: str


def typed_words(text: str) -> list[str]:
    """The words typed; one without a letter or digit in it (`"`, `(`, `-`) is dropped: the tokenizer would make nothing of it."""
    return [w for w in text.split() if any(ch.isalnum() for ch in w)][:MAX_WORDS]


def fts_query(text: str, prefix_last: bool = True) -> str | None:
    """The FTS5 MATCH expression for what the user typed; None when there is nothing to look for (or, with
    `prefix_last`, when the last word is too short to be a prefix worth looking for)."""
    words = typed_words(text)
    if not words or (prefix_last and len(words[-1]) < MIN_PREFIX):
        return None
    phrases = ['"' + w.replace('"', '""') + '"' for w in words]
    if prefix_last:
        phrases[-1] += "*"
    return " ".join(phrases)


# Two whole statements (no SQL built from strings, only constants): across every conversation but those of an
# import not yet finished, and within one, whose messages' ids bound the walk through the index (below). The
# snippet's markers and length are bound like any value.
_HITS = (
    "SELECT m.id, m.conversation_id, c.title, m.role, m.created_at, snippet(message_search, 0, ?, ?, ?, ?) "  # nosec B608: constants only (HIDDEN too)
    "FROM message_search JOIN messages m ON m.id = message_search.rowid JOIN conversations c ON c.id = m.conversation_id "
    "WHERE message_search MATCH ? AND message_search.rowid < ? AND c.id NOT IN (" + pending_imports.HIDDEN + ") "
    "ORDER BY message_search.rowid DESC LIMIT ?"
)
_HITS_WITHIN = (
    "SELECT m.id, m.conversation_id, c.title, m.role, m.created_at, snippet(message_search, 0, ?, ?, ?, ?), m.content "
    "FROM message_search JOIN messages m ON m.id = message_search.rowid JOIN conversations c ON c.id = m.conversation_id "
    "WHERE message_search MATCH ? AND message_search.rowid < ? AND message_search.rowid >= ? AND m.conversation_id = ? "
    "ORDER BY message_search.rowid DESC LIMIT ?"
)
_SNIPPET = (MARK_START, MARK_END, ELLIPSIS, SNIPPET_TOKENS)


def search(db: sqlite3.Connection, text: str, conversation_id: str | None = None, cursor: Cursor | None = None, limit: int = PAGE) -> Page:
    """A page of the messages matching `text` (only those of `conversation_id` if given), from `cursor` on
    (None: the first page). Raises sqlite3.Error only for a fault of the database (or sqlite3.OperationalError
    "interrupted" when a newer search cancelled this one)."""
    cursor = cursor or Cursor()
    whole = fts_query(text, prefix_last=False)
    if whole is None:
        return Page([], None)
    bounds = (0, 2**63 - 1)
    if conversation_id is not None:
        lowest, highest = db.execute("SELECT min(id), max(id) FROM messages WHERE conversation_id = ?", (conversation_id,)).fetchone()
        if lowest is None:
            return Page([], None)
        bounds = (lowest, highest + 1)
    prefix = fts_query(text)
    runs = [whole] + ([f"({prefix}) NOT ({whole})"] if prefix is not None else [])  # the prefix run: only what the first had not
    words = typed_words(text)
    hits: list[Hit] = []
    run, before = cursor.run, cursor.before_id
    while run < len(runs):
        if run == 1 and conversation_id is not None and len(words[-1]) > INDEXED_PREFIX:
            found = _prefix_run_within(db, words, whole, conversation_id, bounds, before, limit - len(hits))
        else:
            found = _hits(db, runs[run], conversation_id, bounds, before, limit - len(hits))
        hits += found
        if len(hits) == limit:
            return Page(hits, Cursor(run, found[-1].message_id))
        run, before = run + 1, 2**63 - 1
    return Page(hits, None)


def _prefix_run_within(db: sqlite3.Connection, words: list[str], whole: str, conversation_id: str, bounds: tuple[int, int], before: int, limit: int) -> list[Hit]:
    """The prefix run within one conversation, for a last word longer than the index's prefixes: FTS5 would
    merge the lists of every word in the database that begins with it before the first hit (150 ms for a
    common one in 500,000 messages), however few messages the conversation has. Instead the walk uses the
    indexed prefix of its first letters (lazily, within the conversation's ids) and keeps the messages with
    a word that begins with the whole last word, as the tokenizer reads words; the snippet then marks only those."""
    last = _normal(words[-1])
    others = {_normal(w) for w in words[:-1]}
    short = " ".join(['"' + w.replace('"', '""') + '"' for w in words[:-1]] + ['"' + words[-1][:INDEXED_PREFIX].replace('"', '""') + '"*'])
    broad = f"({short}) NOT ({whole})"
    lowest, highest = bounds
    hits: list[Hit] = []
    while len(hits) < limit:
        rows = db.execute(_HITS_WITHIN, (*_SNIPPET, broad, min(before, highest), lowest, conversation_id, WITHIN_BATCH)).fetchall()
        for r in rows:
            if any(token.startswith(last) for token in _tokens(str(r[6]))):
                snippet = _MARKED.sub(lambda m: m.group(0) if _normal(m.group(1)).startswith(last) or _normal(m.group(1)) in others else m.group(1), str(r[5]))
                hits.append(Hit(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]), snippet))
                if len(hits) == limit:
                    break
        if len(rows) < WITHIN_BATCH:
            break
        before = int(rows[-1][0])
    return hits


_MARKED = re.compile(MARK_START + "(.*?)" + MARK_END, re.S)
_TOKEN = re.compile(r"[^\W_]+")  # as unicode61 splits: letters and digits; "read_csv" is two words


def _normal(word: str) -> str:
    """A word as the index's tokenizer keeps it: case folded, diacritics dropped (unicode61 remove_diacritics 2)."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_normal(text))


def _hits(db: sqlite3.Connection, match: str, conversation_id: str | None, bounds: tuple[int, int], before: int, limit: int) -> list[Hit]:
    if conversation_id is None:
        rows = db.execute(_HITS, (*_SNIPPET, match, before, limit)).fetchall()
    else:
        # Within one conversation: its messages' ids bound the walk through the index, which then stops at the
        # page's end as above. (Looking up each of its ids in the index instead costs a doclist read per id.)
        lowest, highest = bounds
        rows = db.execute(_HITS_WITHIN, (*_SNIPPET, match, min(before, highest), lowest, conversation_id, limit)).fetchall()
    return [Hit(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]), str(r[5])) for r in rows]


def highlighted_html(snippet: str) -> str:
    """The snippet as HTML: its text escaped, its matches in <b> (the markers never reach the screen)."""
    import html

    return html.escape(snippet).replace(MARK_START, "<b>").replace(MARK_END, "</b>")
