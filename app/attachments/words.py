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
    parts = [attachment.note] if attachment.note else []
    if attachment.kind == "image":
        parts.insert(0, Attachments.tr("A picture, seen by the model"))
    elif attachment.fits_whole:
        parts.insert(0, Attachments.tr("Fits the context: the whole document goes into the prompt"))
    elif attachment.searchable:
        parts.insert(0, Attachments.tr("Too large for the context: the parts that match your question are put in the prompt, and cited under the reply"))
    if attachment.pages:
        parts.append(Attachments.tr("%n page(s)", None, attachment.pages))
    return "\n".join(p for p in parts if p)


def searched_by_words(attachment: StoredAttachment) -> str:
    return Attachments.tr(
        "{name} is too large for the model's context ({tokens}): the parts that share the most words with your question go into the prompt."
    ).format(name=attachment.name, tokens=figures.tokens(attachment.tokens))


def citation_title(citation: StoredCitation) -> str:
    """'report.pdf — page 3'."""
    return f"{citation.name} — {citation.where}" if citation.where else citation.name
