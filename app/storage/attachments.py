"""A message's attachments and a reply's citations, in the conversation database.

The runtime keeps a file's bytes (content-addressed, by sha256) and its extracted text and vectors;
the window keeps what it shows: the chip (name, size in tokens, whether it fits whole or is searched),
a picture's thumbnail and the picture itself (for the full view, so a reopened conversation shows it
even if the runtime's store was cleared), and the citations under a reply. The `attachments` table
has one row per file, whichever messages refer to it: it is the Documents list, and a document
attached again in another conversation is the same row (and the same stored file in the runtime, so
nothing is extracted or embedded again).

Citations are copied into their reply's rows, text included: they say what the reply was given, and
stay true when the document is later attached again or its store cleared.

These helpers run on the Store's connection, inside its transactions (app/storage/store.py). A message's
ids go to SQLite as one JSON array (json_each): no SQL is built from strings, and no limit on variables.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Sequence

# The attachments' tables (a migration in store.MIGRATIONS). `place` is the citation's "page 3" /
# "lines 40–62" (WHERE is a keyword of SQL).
MIGRATION = """
CREATE TABLE attachments (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('document', 'image')),
    name TEXT NOT NULL,
    mime TEXT NOT NULL DEFAULT '',
    bytes INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    pages INTEGER NOT NULL DEFAULT 0,
    fits_whole INTEGER NOT NULL DEFAULT 0,
    searchable INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT '',
    thumbnail BLOB,
    image BLOB,
    added_at REAL NOT NULL,
    used_at REAL NOT NULL
);
CREATE INDEX attachments_by_use ON attachments(kind, used_at DESC);
CREATE TABLE message_attachments (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    attachment_id TEXT NOT NULL REFERENCES attachments(id),
    PRIMARY KEY (message_id, ord)
);
CREATE INDEX message_attachments_by_attachment ON message_attachments(attachment_id);
CREATE TABLE message_citations (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    attachment_id TEXT NOT NULL,
    name TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    place TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (message_id, ord)
);
"""

# 7 -> 8: what the window says of an attachment and a citation, in its own language, from figures rather than the
# runtime's English words. The rows written before keep those words; the migration reads the figures back out of them
# (runtime/documents/library.py wrote them: "larger than half the context (N tokens): ...", "page 3", "lines 40–62").
PLACES_MIGRATION = """
ALTER TABLE attachments ADD COLUMN words_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attachments ADD COLUMN document_budget INTEGER NOT NULL DEFAULT 0;
UPDATE attachments SET words_only = (note LIKE '%share the most words%'),
    document_budget = CAST(substr(note, length('larger than half the context (') + 1) AS INTEGER)
    WHERE note LIKE 'larger than half the context (%';
ALTER TABLE message_citations ADD COLUMN page INTEGER NOT NULL DEFAULT 0;
ALTER TABLE message_citations ADD COLUMN last_page INTEGER NOT NULL DEFAULT 0;
ALTER TABLE message_citations ADD COLUMN first_line INTEGER NOT NULL DEFAULT 0;
ALTER TABLE message_citations ADD COLUMN last_line INTEGER NOT NULL DEFAULT 0;
UPDATE message_citations SET page = CAST(substr(place, 6) AS INTEGER), last_page = CAST(substr(place, 6) AS INTEGER)
    WHERE place GLOB 'page [0-9]*';
UPDATE message_citations SET page = CAST(substr(place, 7) AS INTEGER), last_page = CAST(substr(place, instr(place, '–') + 1) AS INTEGER)
    WHERE place GLOB 'pages [0-9]*–[0-9]*';
UPDATE message_citations SET first_line = CAST(substr(place, 6) AS INTEGER), last_line = CAST(substr(place, 6) AS INTEGER)
    WHERE place GLOB 'line [0-9]*';
UPDATE message_citations SET first_line = CAST(substr(place, 7) AS INTEGER), last_line = CAST(substr(place, instr(place, '–') + 1) AS INTEGER)
    WHERE place GLOB 'lines [0-9]*–[0-9]*';
"""



@dataclass
class StoredAttachment:
    """A file attached to a message, as the window shows it: what the runtime's `attachment.add` answered,
    and for a picture its thumbnail (PNG bytes; the picture itself is read on demand: `image_bytes`)."""

    id: str  # sha256 hex of the file's bytes: the runtime's key for it
    kind: str  # "document" or "image"
    name: str
    mime: str = ""
    size: int = 0  # in bytes
    tokens: int = 0
    pages: int = 0
    fits_whole: bool = False
    searchable: bool = False
    note: str = ""  # the runtime's, in English: the window says it from the fields (app/attachments/words.py)
    thumbnail: bytes = b""
    image: bytes = field(default=b"", repr=False)  # only while it is being stored: the picture, for the full view
    words_only: bool = False  # searched by its words alone (no embedding model was loaded when it was read)
    document_budget: int = 0  # the most tokens of the context a document could take whole (0: no model was loaded)


@dataclass
class StoredCitation:
    """A chunk a reply was given: which attachment, where in it, and the text itself."""

    attachment_id: str
    name: str
    chunk: int
    where: str  # as the runtime said it, in English ("page 3"): shown where the numbers below are not known
    text: str
    # Where in the attachment (0: not known, as in a citation stored before version 8 that the migration could not read).
    page: int = 0
    last_page: int = 0
    first_line: int = 0
    last_line: int = 0


# What _attachment reads, the last columns of a row: every query of attachments selects them so.
_COLUMNS = "a.id, a.kind, a.name, a.mime, a.bytes, a.tokens, a.pages, a.fits_whole, a.searchable, a.note, a.thumbnail, a.words_only, a.document_budget"


def _attachment(row: sqlite3.Row | tuple) -> StoredAttachment:
    id_, kind, name, mime, size, tokens, pages, fits_whole, searchable, note, thumbnail, words_only, budget = row[-13:]
    return StoredAttachment(id_, kind, name, mime, size, tokens, pages, bool(fits_whole), bool(searchable), note, bytes(thumbnail or b""),
                            words_only=bool(words_only), document_budget=budget)


_INSERT = (
    "INSERT INTO attachments (id, kind, name, mime, bytes, tokens, pages, fits_whole, searchable, note, words_only, document_budget, "
    "thumbnail, image, added_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO "
)
_REFRESH = (
    "UPDATE SET name = excluded.name, mime = excluded.mime, tokens = excluded.tokens, pages = excluded.pages, "
    "fits_whole = excluded.fits_whole, searchable = excluded.searchable, note = excluded.note, words_only = excluded.words_only, "
    "document_budget = excluded.document_budget, "
    "thumbnail = COALESCE(excluded.thumbnail, thumbnail), image = COALESCE(excluded.image, image), used_at = excluded.used_at"
)


def remember(db: sqlite3.Connection, attachment: StoredAttachment, now: float | None = None, *, used: bool = True) -> None:
    """Keep (or refresh) the attachment's row; a picture already kept keeps its bytes if none come now.

    `used` False: a row already kept stays as it is, its place in the Documents list (last used first) included:
    a conversation put back (undo) or imported names its files again, but nobody attached one just now."""
    now = time.time() if now is None else now
    db.execute(
        _INSERT + (_REFRESH if used else "NOTHING"),
        (
            attachment.id, attachment.kind, attachment.name, attachment.mime, attachment.size, attachment.tokens, attachment.pages,
            int(attachment.fits_whole), int(attachment.searchable), attachment.note, int(attachment.words_only), attachment.document_budget,
            attachment.thumbnail or None, attachment.image or None, now, now,
        ),
    )


def link(db: sqlite3.Connection, message_id: int, attachments: Sequence[StoredAttachment], now: float | None = None, *, used: bool = True) -> None:
    """Keep each attachment and tie it to the message, in order (`used`: as remember's)."""
    for ord_, attachment in enumerate(attachments):
        remember(db, attachment, now, used=used)
        db.execute("INSERT INTO message_attachments (message_id, ord, attachment_id) VALUES (?, ?, ?)", (message_id, ord_, attachment.id))


def save_citations(db: sqlite3.Connection, message_id: int, citations: Sequence[StoredCitation]) -> None:
    """The reply's citations, replacing any it had (a reply ends once; regenerate makes a new message)."""
    db.execute("DELETE FROM message_citations WHERE message_id = ?", (message_id,))
    db.executemany(
        "INSERT INTO message_citations (message_id, ord, attachment_id, name, chunk, place, text, page, last_page, first_line, last_line) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(message_id, i, c.attachment_id, c.name, c.chunk, c.where, c.text, c.page, c.last_page, c.first_line, c.last_line) for i, c in enumerate(citations)],
    )


def attachments_of(db: sqlite3.Connection, message_ids: Sequence[int]) -> dict[int, list[StoredAttachment]]:
    """Each message's attachments, in the order they were attached (messages without any are left out)."""
    out: dict[int, list[StoredAttachment]] = {}
    rows = db.execute(
        f"SELECT ma.message_id, {_COLUMNS} "  # nosec B608: the query's text is this module's constants; every value is bound
        "FROM message_attachments ma JOIN attachments a ON a.id = ma.attachment_id "
        "WHERE ma.message_id IN (SELECT value FROM json_each(?)) ORDER BY ma.message_id, ma.ord",
        (json.dumps(list(message_ids)),),
    ).fetchall()
    for row in rows:
        out.setdefault(row[0], []).append(_attachment(row))
    return out


def stored(db: sqlite3.Connection, attachment_ids: Sequence[str]) -> dict[str, StoredAttachment]:
    """The rows this database keeps of these attachments, by id (ids it has no row for are left out)."""
    rows = db.execute(
        f"SELECT {_COLUMNS} "  # nosec B608: the query's text is this module's constants; every value is bound
        "FROM attachments a WHERE a.id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(attachment_ids)),),
    ).fetchall()
    return {row[0]: _attachment(row) for row in rows}


def citations_of(db: sqlite3.Connection, message_ids: Sequence[int]) -> dict[int, list[StoredCitation]]:
    out: dict[int, list[StoredCitation]] = {}
    rows = db.execute(
        "SELECT message_id, attachment_id, name, chunk, place, text, page, last_page, first_line, last_line FROM message_citations "
        "WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, ord",
        (json.dumps(list(message_ids)),),
    ).fetchall()
    for message_id, *citation in rows:
        out.setdefault(message_id, []).append(StoredCitation(*citation))
    return out


def documents(db: sqlite3.Connection) -> list[StoredAttachment]:
    """Every document attached so far, the most recently used first: the Documents list."""
    rows = db.execute(
        f"SELECT {_COLUMNS} "  # nosec B608: the query's text is this module's constants; every value is bound
        "FROM attachments a WHERE a.kind = 'document' ORDER BY a.used_at DESC"
    ).fetchall()
    return [_attachment(row) for row in rows]


def image_bytes(db: sqlite3.Connection, attachment_id: str) -> bytes | None:
    """A picture's bytes as it was attached (the full view); None if none is kept."""
    row = db.execute("SELECT image FROM attachments WHERE id = ?", (attachment_id,)).fetchone()
    return bytes(row[0]) if row and row[0] is not None else None
