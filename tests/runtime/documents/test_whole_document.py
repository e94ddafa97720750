"""A document that fits goes into its user turn whole, through the real runtime and the starter model:
the prompt grows by the document's tokens, and a second question about it evaluates only the question."""

from __future__ import annotations

import base64

import pytest

from planted_facts import fact, planted_document, question
from runtime.protocol import Attachment, AttachmentAddParams, ChatGenerateParams, ChatMessage, ErrorCode, RpcError, methods

NOTES = "\n\n".join(
    f"Section {i}. The harbour office opens at {7 + i % 5} in the morning and the ferry to the island leaves from pier {i + 2}."
    for i in range(12)
)


def add(runtime, name: str, text: str):
    return runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name=name, data_base64=base64.b64encode(text.encode()).decode()))


def ask(runtime, conversation: str, messages: list[ChatMessage]):
    return runtime.chat(ChatGenerateParams(conversation, messages, max_tokens=8, temperature=0.0, seed=1), timeout=300)


def test_a_document_that_fits_is_prompted_whole_and_cached_like_any_turn(loaded_runtime):
    info = add(loaded_runtime, "harbour.md", NOTES)
    assert info.fits_whole and not info.searchable and 200 < info.tokens < 1024
    question = "When does the harbour office open?"

    plain = ask(loaded_runtime, "whole-plain", [ChatMessage("user", question)])
    attached = Attachment("document", info.id, "harbour.md", info.mime)
    first_turn = ChatMessage("user", question, attachments=[attached])
    first = ask(loaded_runtime, "whole-doc", [first_turn])
    growth = first.stats.prompt_tokens - plain.stats.prompt_tokens
    assert info.tokens <= growth <= info.tokens + 24  # the document, and its <document name="..."> wrapper (16 with SmolLM2)
    assert first.citations == []  # whole: nothing was retrieved
    print(f"document {info.tokens} tokens; prompt {plain.stats.prompt_tokens} -> {first.stats.prompt_tokens} (+{growth})")

    second = ask(loaded_runtime, "whole-doc", [first_turn, ChatMessage("assistant", first.text), ChatMessage("user", "And the ferry?")])
    assert second.stats.prompt_tokens > first.stats.prompt_tokens
    assert second.stats.prompt_tokens_reused >= first.stats.prompt_tokens  # the document's cells, kept
    assert second.stats.prompt_tokens_evaluated < 40  # the question (and the reply's end), not the document
    print(f"second question: prompt {second.stats.prompt_tokens}, reused {second.stats.prompt_tokens_reused}, evaluated {second.stats.prompt_tokens_evaluated}")


def test_an_attachment_the_runtime_never_stored_is_refused_by_name(loaded_runtime):
    unknown = Attachment("document", "0" * 64, "ghost.pdf")
    with pytest.raises(RpcError) as caught:
        ask(loaded_runtime, "ghost", [ChatMessage("user", "What does it say?", attachments=[unknown])])
    assert caught.value.code == ErrorCode.INVALID_PARAMS and "ghost.pdf" in caught.value.message and "attachment.add" in caught.value.message


def test_a_document_too_large_without_an_embedding_model_is_searched_by_its_words(loaded_runtime):
    # Before, this was refused: "no embedding model is loaded". The words alone find a planted fact (recall@4 1.00,
    # test_retrieval_recall.py), so the document is used at once; an embedding model only adds paraphrases.
    text = planted_document(paragraphs=60, facts=5)
    info = add(loaded_runtime, "chronicle.txt", text)
    assert not info.fits_whole and info.searchable and info.words_only
    assert "share the most words" in info.note and "embedding model" in info.note
    document = Attachment("document", info.id, "chronicle.txt")
    reply = ask(loaded_runtime, "by-words", [ChatMessage("user", question(3), attachments=[document])])
    assert any(fact(3) in c.text for c in reply.citations), reply.citations
    assert all(c.attachment_id == info.id and c.where.startswith("line") for c in reply.citations)
    # A question that shares no word with the document gets its beginning rather than nothing.
    opening = ask(loaded_runtime, "by-words-none", [ChatMessage("user", "Zusammenfassung?", attachments=[document])])
    assert opening.citations and text.startswith(opening.citations[0].text)
