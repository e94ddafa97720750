"""What a chip's tooltip and a citation say of the runtime's findings, in the window's language: said from the
figures the runtime sends (protocol 1.12), never from its English words."""

from __future__ import annotations

import pytest

from app.attachments.words import chip_detail, citation_title
from app.storage.attachments import StoredAttachment, StoredCitation

ENGLISH_NOTE = "larger than half the context (4096 tokens): the parts that share the most words with each question are used"


def document(**figures) -> StoredAttachment:
    return StoredAttachment("a" * 64, "document", "minutes.md", "text/markdown", 40_000, note=ENGLISH_NOTE, **figures)


def cited(where: str = "page 3", **place) -> StoredCitation:
    return StoredCitation("a" * 64, "report.pdf", 7, where, "The code is 4817.", **place)


def test_in_english_a_large_document_says_the_room_it_has_and_how_its_parts_are_found(english):
    said = chip_detail(document(tokens=9_000, searchable=True, words_only=True, document_budget=4_096))
    assert "larger than half the context (4,096 tokens)" in said and "the words they share with your question" in said
    assert ENGLISH_NOTE not in said  # the runtime's own words are not repeated beside them
    embedded = chip_detail(document(tokens=9_000, searchable=True, document_budget=4_096))
    assert "larger than half the context (4,096 tokens)" in embedded and "words they share" not in embedded
    unread = chip_detail(StoredAttachment("b" * 64, "document", "notes.txt", note="no model is loaded: its size in tokens is known once one is"))
    assert unread.endswith("Its size in tokens is known once a model is loaded")
    assert "page" not in chip_detail(document(tokens=900, fits_whole=True))


def test_in_indonesian_an_attachment_and_its_citations_read_in_indonesian(indonesian):
    said = chip_detail(document(tokens=9_000, searchable=True, words_only=True, document_budget=4_096, pages=12))
    assert "setengah konteks (4.096 token)" in said and "12 halaman" in said, said
    for english in ("larger", "context", "words", "page", ENGLISH_NOTE):
        assert english not in said
    unread = chip_detail(StoredAttachment("b" * 64, "document", "notes.txt", note="no model is loaded: its size in tokens is known once one is"))
    assert "model" in unread and "loaded" not in unread and "no model" not in unread
    assert citation_title(cited("page 3", page=3, last_page=3)) == "report.pdf — halaman 3"
    assert citation_title(cited("pages 5–6", page=5, last_page=6)) == "report.pdf — halaman 5–6"
    assert citation_title(cited("line 4", first_line=4, last_line=4)) == "report.pdf — baris 4"
    assert citation_title(cited("lines 1040–1062", first_line=1_040, last_line=1_062)) == "report.pdf — baris 1.040–1.062"


@pytest.mark.parametrize(
    ("citation", "title"),
    [
        (cited("page 3", page=3, last_page=3), "report.pdf — page 3"),
        (cited("pages 5–6", page=5, last_page=6), "report.pdf — pages 5–6"),
        (cited("line 4", first_line=4, last_line=4), "report.pdf — line 4"),
        (cited("lines 40–62", first_line=40, last_line=62), "report.pdf — lines 40–62"),
        (cited("Seite 3"), "report.pdf — Seite 3"),  # imported from another app: its words, as it wrote them
        (cited(""), "report.pdf"),
    ],
)
def test_a_citation_s_place_is_said_from_its_numbers_or_else_as_it_came(english, citation, title):
    assert citation_title(citation) == title
