"""How an attachment reads on its chip and a citation under a reply: Qt-free text, tested on its own."""

from __future__ import annotations

from typing import Callable

from app.attachments.kinds import Attachments
from app.metrics import figures
from app.storage.attachments import StoredAttachment, StoredCitation


def chip_label(name: str, attachment: StoredAttachment | None, searchable_part: float | None = None, shorten: Callable[[str], str] = str) -> str:
    """'report.pdf · 5,400 tokens', 'cat.png · picture', 'notes.txt · reading…', 'book.pdf · making it searchable… 40 %'.
    `shorten`: the name as the chip has room for it ("quarterly-fin…-v3.md"); what follows it is always whole."""
    name = shorten(attachment.name if attachment is not None else name)
    if attachment is None and searchable_part is not None:
        return Attachments.tr("{name} · making it searchable… {percent}").format(name=name, percent=figures.percent(searchable_part))
    if attachment is None:
        return Attachments.tr("{name} · reading…").format(name=name)
    if attachment.kind == "image":
        return Attachments.tr("{name} · picture").format(name=name)
    if attachment.tokens <= 0:
        return name
    return f"{name} · {figures.tokens(attachment.tokens)}"


def chip_detail(attachment: StoredAttachment | None, searchable_part: float | None = None) -> str:
    """What the chip's tooltip (and a screen reader) says: how the document reaches the model."""
    if attachment is None and searchable_part is not None:
        return Attachments.tr("Too large for the context: the embedding model is reading its parts, so that those your question needs can be found")
    if attachment is None:
        return Attachments.tr("The runtime is reading the file")
    parts = [reading_note(attachment)]
    if attachment.kind == "image":
        parts.insert(0, Attachments.tr("A picture, seen by the model"))
    elif attachment.fits_whole:
        parts.insert(0, Attachments.tr("Fits the context: the whole document goes into the prompt"))
    elif attachment.searchable:
        parts.insert(0, Attachments.tr("Too large for the context: the parts that match your question are put in the prompt, and cited under the reply"))
    if attachment.pages:
        parts.append(Attachments.tr("%n page(s)", None, attachment.pages))
    return "\n".join(p for p in parts if p)


def reading_note(attachment: StoredAttachment) -> str:
    """What the runtime found when it read a document, said from its figures in the window's language ("" : nothing)."""
    if attachment.kind != "document" or attachment.fits_whole:
        return ""
    if not attachment.searchable:
        return Attachments.tr("Its size in tokens is known once a model is loaded") if attachment.tokens <= 0 else ""
    larger = ""
    if attachment.document_budget > 0:
        larger = Attachments.tr("It is larger than half the context ({budget}), the most a document may take whole.").format(
            budget=figures.tokens(attachment.document_budget))
    if attachment.words_only:
        words = Attachments.tr("The parts are found by the words they share with your question: an embedding model would also find "
                               "those that say it in other words.")
        return f"{larger} {words}".strip()
    return larger


def searched_by_words(attachment: StoredAttachment) -> str:
    return Attachments.tr(
        "{name} is too large for the model's context ({tokens}): the parts that share the most words with your question go into the prompt."
    ).format(name=attachment.name, tokens=figures.tokens(attachment.tokens))


def citation_title(citation: StoredCitation) -> str:
    """'report.pdf — page 3'."""
    place = citation_place(citation)
    return f"{citation.name} — {place}" if place else citation.name


def citation_place(citation: StoredCitation) -> str:
    """'page 3', 'pages 3–5', 'line 4', 'lines 40–62' in the window's language; the words the citation came with where
    its numbers are not known (one imported from another app)."""
    c = citation
    if c.page > 0 and c.last_page > c.page:
        return Attachments.tr("pages {first}–{last}").format(first=figures.number(c.page), last=figures.number(c.last_page))
    if c.page > 0:
        return Attachments.tr("page {page}").format(page=figures.number(c.page))
    if c.first_line > 0 and c.last_line > c.first_line:
        return Attachments.tr("lines {first}–{last}").format(first=figures.number(c.first_line), last=figures.number(c.last_line))
    if c.first_line > 0:
        return Attachments.tr("line {line}").format(line=figures.number(c.first_line))
    return c.where
