"""A PDF larger than half the context, through the real runtime: searched with the embedding model loaded beside the
chat model (the starter model's own pooled embeddings, for plumbing), answered from its retrieved chunks, cited by page."""

from __future__ import annotations

import base64

import pytest

from document_files import pdf_bytes
from runtime.protocol import Attachment, AttachmentAddParams, ChatGenerateParams, ChatMessage, EmbeddingLoadParams, ModelLoadParams, methods

FILLER = ["Ships sail north in winter.", "Gulls circle over harbours.", "Rain falls often here.", "Fishermen mend nets at dawn."]


@pytest.fixture(scope="module")
def runtime_with_embeddings(starter_model):
    from runtime.client import RuntimeClient

    client = RuntimeClient()
    client.initialize("pytest")
    client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024))
    loaded = client.request(methods.EMBEDDING_LOAD, EmbeddingLoadParams(str(starter_model), n_threads=1), timeout=300)
    assert loaded.dimensions == 576
    yield client
    client.close()


def test_a_pdf_larger_than_the_context_allows_is_answered_from_chunks_cited_by_page(runtime_with_embeddings):
    pages = [[f"{FILLER[(p + i) % 4]} Entry {p}.{i}." for i in range(24)] for p in range(8)]
    pages[5][10] = "The secret code of the blue observatory is 4817."
    info = runtime_with_embeddings.request(
        methods.ATTACHMENT_ADD, AttachmentAddParams(name="logbook.pdf", data_base64=base64.b64encode(pdf_bytes(pages)).decode()), timeout=600
    )
    assert info.pages == 8 and info.tokens > 512 and not info.fits_whole and info.searchable

    turn = ChatMessage("user", "What is the secret code of the blue observatory?", attachments=[Attachment("document", info.id, "logbook.pdf", info.mime)])
    result = runtime_with_embeddings.chat(ChatGenerateParams("logbook", [turn], max_tokens=8, temperature=0.0), timeout=600)
    assert result.citations, "a retrieved document's chunks are cited"
    cited = next(c for c in result.citations if "4817" in c.text)
    assert cited.where in ("page 6", "pages 5–6", "pages 6–7") and cited.attachment_id == info.id and cited.name == "logbook.pdf"
    assert result.stats.prompt_tokens < info.tokens  # chunks, not the whole file


def test_embedding_a_large_document_says_how_far_it_got_for_its_own_request(runtime_with_embeddings):
    """attachment.progress: chunks embedded of how many, for the attachment.add that asked, ending at all of them."""
    from runtime.protocol import AttachmentProgress

    said: list[tuple[str, object]] = []
    runtime_with_embeddings.add_notification_handler(lambda method, params: said.append((method, params)))
    text = "\n\n".join(f"Entry {i}: {FILLER[i % 4]} The tide table for day {i} was kept by the harbour master." for i in range(40))  # 4 chunks: larger than half the context
    call = runtime_with_embeddings.start(methods.ATTACHMENT_ADD, AttachmentAddParams(name="tides.md", data_base64=base64.b64encode(text.encode()).decode()))
    info = call.result(600)
    assert info.searchable
    progress = [AttachmentProgress(**p) for method, p in said if method == "attachment.progress"]  # the client hands on the JSON
    assert progress and all(p.request_id == call.id for p in progress)
    assert [p.done for p in progress] == sorted(p.done for p in progress) and len({p.total for p in progress}) == 1
    assert progress[-1].done == progress[-1].total >= 2
    again = runtime_with_embeddings.start(methods.ATTACHMENT_ADD, AttachmentAddParams(id=info.id))
    assert again.result(60).searchable
    assert not [p for method, p in said if method == "attachment.progress" and p["request_id"] == again.id]  # embedded already: nothing to say
