"""Which files can be attached and how a chip reads: the Qt-free rules (app/attachments/kinds.py, words.py)."""

from __future__ import annotations

import pytest

from app.attachments import kinds, words
from app.storage.attachments import StoredAttachment, StoredCitation


@pytest.mark.parametrize("name, kind", [
    ("report.pdf", "document"), ("Notes.MD", "document"), ("main.rs", "document"), ("data.csv", "document"),
    ("page.html", "document"), ("letter.docx", "document"), ("Makefile", "document"),
    ("cat.JPG", "image"), ("shot.png", "image"), ("model.gguf", None), ("setup.exe", None), ("archive.zip", None),
])  # fmt: skip
def test_the_kind_of_a_file_comes_from_its_name(name, kind):
    assert kinds.kind_of(name) == kind


def test_a_picture_for_a_model_that_cannot_see_is_refused_naming_the_model(english):
    kind, refusal = kinds.check_kind("cat.png", vision=False, model="SmolLM2 135M")
    assert kind is None and refusal is not None
    assert refusal.message.startswith("cat.png was not attached: SmolLM2 135M cannot see pictures")
    assert kinds.check_kind("cat.png", vision=True, model="SmolVLM") == ("image", None)
    _, no_model = kinds.check_kind("cat.png", vision=False, model="")
    assert "no model is loaded" in no_model.message


def test_a_size_over_the_limit_is_said_in_the_limit_s_unit(english):
    refusal = kinds.check_size("big.pdf", "document", kinds.MAX_DOCUMENT_BYTES + 1)
    assert refusal.reason == "it is 64.0 MiB; the most Lokal takes is 64 MiB."
    assert kinds.check_size("big.png", "image", kinds.MAX_IMAGE_BYTES + 1).reason.endswith("20 MiB.")
    assert kinds.check_size("ok.txt", "document", 10) is None


def test_a_chip_says_the_size_in_tokens_and_how_the_document_reaches_the_model(english):
    fits = StoredAttachment("a" * 64, "document", "notes.txt", tokens=1234, fits_whole=True)
    searched = StoredAttachment("b" * 64, "document", "book.pdf", tokens=90_000, pages=300, searchable=True)
    assert words.chip_label("notes.txt", None) == "notes.txt · reading…"
    assert words.chip_label("notes.txt", fits) == "notes.txt · 1,234 tokens"
    assert "whole document goes into the prompt" in words.chip_detail(fits)
    assert "cited under the reply" in words.chip_detail(searched) and "300 pages" in words.chip_detail(searched)
    by_words = words.searched_by_words(StoredAttachment("c" * 64, "document", "big.txt", tokens=5000, searchable=True))
    assert by_words == "big.txt is too large for the model's context (5,000 tokens): the parts that share the most words with your question go into the prompt."
    assert words.citation_title(StoredCitation("b" * 64, "book.pdf", 4, "page 12", "…")) == "book.pdf — page 12"
