"""Retrieval from a document 20x the context, with 20 facts planted at known places: recall@k of the chunks found.

The embedding model is the starter model (SmolLM2-135M, mean-pooled) in its own llama.cpp context: no
embedding GGUF can be fetched here. It is a chat model, not trained to embed, so its vectors alone
find few facts, and the keyword ranking (FTS5, BM25) finds most; the figures of the vector, keyword and
hybrid (fused) rankings, and of the words-only search used without an embedding model, are printed (pytest -s)
and stated in the README.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from planted_facts import fact, planted_document, question
from runtime.documents.library import ChatModelView, DocumentLibrary
from runtime.embeddings.model import EmbeddingModel
from runtime.protocol import Attachment, ChatGenerateParams, ChatMessage

N_CTX = 256  # the chat model's context in this test: the document is 20 times that
FACTS = 20


@pytest.fixture(scope="module")
def embedder(starter_model):
    model = EmbeddingModel(str(starter_model))
    yield model
    model.close()


@pytest.mark.timeout(1800)  # embedding ~5,500 tokens on a shared 2-core machine
def test_planted_facts_are_found_in_a_document_twenty_times_the_context(embedder, tmp_path):
    chat = ChatModelView(embedder.count_tokens, N_CTX)
    library = DocumentLibrary(tmp_path, lambda: chat)
    library.embedder = embedder
    text = planted_document(paragraphs=100, facts=FACTS)
    info = library.add(text.encode(), "chronicle.txt", "text/plain", "document")
    assert info.tokens >= 20 * N_CTX and info.searchable and not info.fits_whole

    rankings: dict[str, list[list[str]]] = {"vector": [], "keyword": [], "hybrid": []}  # per fact: its 8 best chunks' texts
    texts = {hit.chunk: hit.text for hit in library.index.nearest([info.id], embedder.identity, embedder.embed(["x"]).vectors[0], 10_000)}
    for i in range(FACTS):
        vector = embedder.embed([question(i)]).vectors[0]
        rankings["vector"].append([h.text for h in library.index.nearest([info.id], embedder.identity, vector, 8)])
        rankings["keyword"].append([texts[c] for _, c in library.index.keyword_ranks([info.id], embedder.identity, question(i), 8)])
        rankings["hybrid"].append([h.text for h in library.index.search([info.id], embedder.identity, vector, 8, words=question(i))])
    # No embedding model loaded: the same chunks kept without vectors, searched by their words alone.
    words_only = DocumentLibrary(tmp_path, lambda: chat)
    assert words_only.add(text.encode(), "chronicle.txt", "text/plain", "document").words_only
    rankings["words only"] = [[h.text for h in words_only.search([info.id], question(i), 8)] for i in range(FACTS)]
    recall = {kind: {k: sum(any(fact(i) in t for t in ranked[i][:k]) for i in range(FACTS)) / FACTS for k in (1, 4, 8)} for kind, ranked in rankings.items()}
    print("recall@k", json.dumps(recall))
    assert recall["keyword"][4] >= 0.9  # the words of a planted fact's question find it
    assert recall["words only"] == recall["keyword"]
    assert recall["hybrid"][8] >= recall["vector"][8] and recall["hybrid"][8] >= 0.5

    # In a prompt (a context of 4,096 here: the best chunks that fit its half): the turn carries the fact, and cites its lines.
    roomy = ChatModelView(embedder.count_tokens, 4096)
    library = DocumentLibrary(tmp_path, lambda: roomy)
    library.embedder = embedder
    i = next(i for i in range(FACTS) if any(fact(i) in t for t in rankings["hybrid"][i]))
    turn = ChatMessage("user", question(i), attachments=[Attachment("document", info.id, "chronicle.txt")])
    expanded, citations = library.expand(ChatGenerateParams("c1", [turn]))
    assert 1 < len(citations) <= 8 and all(c.attachment_id == info.id and c.where.startswith("line") for c in citations)
    assert any(fact(i) in c.text for c in citations) and fact(i) in expanded.messages[0].content
    lines = text.split("\n")
    for c in citations:
        first, last = (int(n) for n in c.where.split(" ")[1].split("–")) if "–" in c.where else (int(c.where.split(" ")[1]),) * 2
        assert "\n".join(lines[first - 1 : last]) == c.text

    # Another conversation, another library over the same store (as after a restart): no new embedding.
    embedded_at = sqlite3.connect(tmp_path / "chunks.sqlite3").execute("SELECT embedded_ns FROM indexed").fetchall()
    again = DocumentLibrary(tmp_path, lambda: roomy)
    again.embedder = embedder
    assert again.add(text.encode(), "same-file-new-name.txt", "text/plain", "document").id == info.id
    _, other_citations = again.expand(ChatGenerateParams("c2", [ChatMessage("user", question(i), attachments=[Attachment("document", info.id, "x.txt")])]))
    assert [c.text for c in other_citations] == [c.text for c in citations]
    assert sqlite3.connect(tmp_path / "chunks.sqlite3").execute("SELECT embedded_ns FROM indexed").fetchall() == embedded_at
