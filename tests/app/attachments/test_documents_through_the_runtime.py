"""Documents sent with a message, through the real window, runtime and starter model (offscreen).

A text file that fits goes into the prompt whole: the reply's prompt_tokens grow by about its size. A PDF
larger than the context is searched (the starter model's own pooled embeddings stand in for an embedding
model here): the reply's citations name the file and the page, open to the cited text, and are kept with
the reply. A document too large with no embedding model loaded is searched by its words, and the catalog's
embedding model is offered.
The Documents list attaches a document again without the runtime reading it again.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from app.metrics import figures
from app.storage import Store
from runtime.protocol import methods
from document_files import pdf_bytes
from waiting import qt_wait_until
from window_helpers import REPLY_MS

pytestmark = pytest.mark.slow

FACT_PAGE = 3


def attach(window, *paths):
    before = len(window.attacher.pending.items)
    assert window.attacher.add_paths([str(p) for p in paths]) == len(paths), window.banner_text.text()
    qt_wait_until(lambda: not window.attacher.pending.reading, 600, "the runtime reading (and embedding) the attachments")
    assert len(window.attacher.pending.items) == before + len(paths), window.banner_text.text()


def send(window, text):
    window.composer.edit.setPlainText(text)
    window.composer.button.click()
    qt_wait_until(lambda: not window.chat.any_generating, REPLY_MS / 1000, "the reply")
    reply = window.chat.messages.messages[-1]
    assert reply.role == "assistant" and reply.record is not None and reply.record.stats is not None, reply
    return reply


def test_a_text_file_that_fits_is_sent_whole_and_the_prompt_grows_by_it(win, tmp_path):
    notes = tmp_path / "harbour.txt"
    notes.write_text("\n\n".join(f"Section {i}. The ferry to the island leaves from pier {i + 2} at {7 + i % 5} o'clock." for i in range(12)), encoding="utf-8")
    question = "Which pier does the ferry leave from?"
    plain = send(win, question)
    win.chat.new_conversation()
    attach(win, notes)
    (info,) = win.attacher.take()
    assert info.fits_whole and info.tokens > 100
    assert f"harbour.txt · {info.tokens} tokens" == win.composer.chips.chips[0].label.text()
    with_file = send(win, question)
    growth = with_file.record.stats.prompt_tokens - plain.record.stats.prompt_tokens
    assert info.tokens <= growth <= info.tokens + 16  # the document, in its wrapper
    assert win.attacher.pending.items == []  # the chips went with the message
    question_row = win.chat.messages.messages[-2]
    assert [a.name for a in question_row.attachments] == ["harbour.txt"]
    widget = win.chat_view.widgets[-2]
    qt_wait_until(lambda: widget.attached.isVisible(), 10, "the chip under the question")
    assert widget.attached.parts[0].label.text() == f"harbour.txt · {info.tokens} tokens"


def big_report(path):
    pages = []
    for page in range(1, 6):  # about 1,300 tokens: over half the 2,048-token context, so it is searched
        lines = [f"Page {page}, paragraph {n}: the quarterly figures for the northern region were reviewed and filed." for n in range(12)]
        if page == FACT_PAGE:
            lines[5] = "The lighthouse keeper's password is AMBER-FALCON-42."
        pages.append(lines)
    path.write_bytes(pdf_bytes(pages))
    return path


def test_a_pdf_larger_than_the_context_is_searched_and_the_reply_cites_its_page(win, tmp_path, starter_model):
    feature = win.features["attachments"]
    feature.embedding.load(str(starter_model))  # the starter model's pooled embeddings: plumbing, not quality
    qt_wait_until(lambda: feature.embedding.loaded is not None, 120, "the embedding model loading")
    labels: list[str] = []  # each chip label the composer showed while the runtime read and embedded the file
    win.attacher.pending.dataChanged.connect(lambda *_: labels.append(win.composer.chips.chips[0].label.text()))
    attach(win, big_report(tmp_path / "report.pdf"))
    (info,) = win.attacher.take()
    assert info.pages == 5 and not info.fits_whole and info.searchable, info
    shares = [label.removeprefix("report.pdf · making it searchable… ") for label in labels if "searchable…" in label]
    assert shares and shares[-1] == "100 %" and all(share.endswith(" %") for share in shares), labels  # attachment.progress, on the chip
    assert labels[-1] == f"report.pdf · {info.tokens:,} tokens"
    reply = send(win, "What is the lighthouse keeper's password?")
    assert reply.citations and all(c.name == "report.pdf" and c.where.startswith("page ") for c in reply.citations)
    assert any("AMBER-FALCON-42" in c.text and c.where == f"page {FACT_PAGE}" for c in reply.citations), [(c.where, c.text[:60]) for c in reply.citations]
    view = win.chat_view.widgets[-1].citations
    qt_wait_until(lambda: view.isVisible() and len(view.items) == len(reply.citations), 10, "the citations under the reply")
    item = view.items[0]
    assert item.button.text() == f"report.pdf — {reply.citations[0].where}" and not item.text.isVisible()
    item.button.click()
    assert item.text.isVisible() and item.text.text() == reply.citations[0].text
    stored = Store(win.store.path)
    try:
        assert stored.message(reply.id).citations == reply.citations  # a reopened conversation shows them again
    finally:
        stored.close()


def test_a_document_too_large_without_an_embedding_model_is_searched_by_its_words_and_offered_one(win, tmp_path, monkeypatch):
    feature = win.features["attachments"]
    win.link.call(methods.EMBEDDING_UNLOAD)
    feature.embedding.loaded = None
    monkeypatch.setattr(feature, "offered", False)
    long_text = tmp_path / "minutes.md"
    items = [f"Item {i}: the committee discussed the budget for the harbour wall at length." for i in range(400)]
    items[250] = "Item 250: the committee chose Marta Ek as treasurer of the lighthouse fund."
    long_text.write_text("\n\n".join(items), encoding="utf-8")
    attach(win, long_text)
    (info,) = win.attacher.take()
    assert not info.fits_whole and info.searchable
    tooltip = win.composer.chips.chips[0].toolTip()
    assert "the parts that match your question are put in the prompt" in tooltip and "the words they share with your question" in tooltip
    assert info.words_only and info.document_budget > 0  # said from these figures, in the window's language
    assert f"larger than half the context ({figures.tokens(info.document_budget)})" in tooltip
    qt_wait_until(lambda: isinstance(feature.question, QMessageBox) and feature.question.isVisible(), 30, "the offer of an embedding model")
    box = feature.question
    assert "minutes.md is too large" in box.text() and "share the most words" in box.text()
    assert "embedding model" in box.informativeText() and "in other words" in box.informativeText()
    assert any(b.text() == "Download" for b in box.buttons())
    box.reject()  # not now: nothing is downloaded in a test
    reply = send(win, "Who is the treasurer of the lighthouse fund?")  # usable meanwhile, found by its words
    assert any("Marta Ek" in c.text for c in reply.citations), [c.text[:60] for c in reply.citations]


def test_the_documents_list_attaches_a_document_again_without_reading_it(win, tmp_path):
    doc = tmp_path / "glossary.md"
    doc.write_text("# Glossary\n\nKV cache: the keys and values of the tokens seen so far.\n", encoding="utf-8")
    attach(win, doc)
    win.composer.sent()
    dialog = win.features["attachments"].open_documents()
    rows = [dialog.model.document(r).name for r in range(dialog.model.rowCount())]
    assert "glossary.md" in rows
    dialog.list.setCurrentIndex(dialog.model.index(rows.index("glossary.md")))
    dialog.attach_button.click()
    qt_wait_until(lambda: not win.attacher.pending.reading, 60, "the runtime saying what it is to the model loaded now")
    (pending,) = win.attacher.pending.items
    assert pending.ready and pending.attachment.name == "glossary.md" and pending.attachment.tokens > 0  # asked by its id: no file read


def test_a_document_attached_before_a_model_is_loaded_gets_its_size_once_one_is(qtbot, store_path, starter_model, tmp_path):
    """The chip of a document attached while no model is loaded names it only (no size in tokens without a
    tokenizer); when a model loads, the document is asked for again, and the chip gives its size for that model."""
    from window_helpers import open_window, wait_loaded

    doc = tmp_path / "ferry.md"
    doc.write_text("The ferry to the island leaves from pier 4 at nine.\n" * 20, encoding="utf-8")
    from app.runtime_link import ConnectionState

    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        qt_wait_until(lambda: window.link.state == ConnectionState.READY, 60, "the runtime starting")
        assert window.attacher.add_paths([str(doc)]) == 1
        qt_wait_until(lambda: not window.attacher.pending.reading, 60, "the runtime reading the file")
        assert window.composer.chips is not None and [c.label.text() for c in window.composer.chips.chips] == ["ferry.md"], window.banner_text.text()
        window.load_model(str(starter_model))
        wait_loaded(qtbot, window)
        qt_wait_until(lambda: window.attacher.pending.items[0].attachment.tokens > 0, 60, "the document asked for again")
        (attached,) = window.attacher.pending.items
        assert attached.attachment.fits_whole
        assert [c.label.text() for c in window.composer.chips.chips] == [f"ferry.md · {attached.attachment.tokens} tokens"]
    finally:
        window.shutdown()
