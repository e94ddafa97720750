"""Files attached to a message: `attachment.add`, the Attachment a ChatMessage carries, and Citation.

A file is sent once with `attachment.add` (a path the runtime can read, or its bytes in base64); the
runtime keeps its bytes in a content-addressed store in its data dir (runtime/documents/store.py),
extracts a document's text once, and answers with what the window shows on the chip: its size in
tokens for the loaded model and whether it fits the context whole or will be searched. Messages then
carry only the Attachment (its sha256), so a file is never resent with every turn, and a document
attached in one conversation is the same stored file in the next (no new extraction or embedding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Union

AttachmentKind = Literal["document", "image"]


@dataclass
class Attachment:
    """A stored file a message refers to; `id` is the sha256 hex of its bytes (what attachment.add answered)."""

    kind: AttachmentKind
    id: str
    name: str = ""
    mime: str = ""


@dataclass
class AttachmentAddParams:
    """`attachment.add`: exactly one of `path` (a file the runtime reads), `data_base64` (its bytes) or `id` (one
    stored here already: what it is to the model loaded now, as a size in tokens is the loaded model's)."""

    name: str = ""  # the file's name as the user knows it (its extension helps tell the format)
    mime: str = ""  # "" : told from the name and the bytes
    path: Optional[str] = None
    data_base64: Optional[str] = None
    id: Optional[str] = None  # an AttachmentInfo.id this runtime answered before (protocol 1.8)


@dataclass
class AttachmentProgress:
    """Notification `attachment.progress` (protocol 1.9): an attachment.add request embedding a large document's chunks
    for search, `done` of `total` so far; a few a second at most, and one at the end."""

    request_id: Union[int, str]  # the attachment.add request's
    done: int
    total: int


@dataclass
class AttachmentInfo:
    """What the runtime knows of a stored attachment."""

    id: str  # sha256 hex of the bytes
    kind: AttachmentKind
    name: str
    mime: str
    bytes: int
    tokens: int = 0  # the extracted text's tokens for the loaded model (0: no model loaded, or an image)
    pages: int = 0  # a PDF's pages (0: not paged)
    fits_whole: bool = False  # the whole text fits the loaded model's context (with room to answer)
    searchable: bool = False  # too large to fit whole: its parts that answer a turn are searched for
    # Why it cannot be used whole, or what was done ("" : nothing to say), in English for logs and older clients:
    # a window says it in its own language from the fields (document_budget, words_only).
    note: str = ""
    # Searched by its words alone: no embedding model is loaded to find the parts that say it in other words.
    words_only: bool = False
    # The most tokens of the loaded model's context a document may take whole (0: no model loaded); protocol 1.12.
    document_budget: int = 0


@dataclass
class Citation:
    """A retrieved chunk a reply was given: `where` is "page 3" or "lines 40–62" of the attachment."""

    attachment_id: str
    name: str
    chunk: int  # the chunk's index in the document
    where: str  # in English, as the prompt's excerpt says it; a window says it from the numbers below
    text: str
    # Where the chunk lies (protocol 1.12): its pages in a paged document (0: not paged), else its lines (1-based).
    page: int = 0
    last_page: int = 0
    first_line: int = 0
    last_line: int = 0
