"""A document that fits goes into its user turn whole, through the real runtime and the starter model:
the prompt grows by the document's tokens, and a second question about it evaluates only the question."""

from __future__ import annotations

import base64

import pytest

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


def test_a_document_too_large_without_an_embedding_model_says_why(loaded_runtime):
    info = add(loaded_runtime, "long.txt", NOTES * 8)
    assert not info.fits_whole and not info.searchable and "no embedding model is loaded" in info.note
    with pytest.raises(RpcError) as caught:
        ask(loaded_runtime, "too-long", [ChatMessage("user", "Summarise", attachments=[Attachment("document", info.id, "long.txt")])])
    assert caught.value.code == ErrorCode.INVALID_PARAMS and "long.txt" in caught.value.message and "embedding model" in caught.value.message
