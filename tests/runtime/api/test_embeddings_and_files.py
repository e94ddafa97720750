"""`/v1/embeddings` and the chat API's `file` parts, through `lokal serve --embedding-model` (the starter model's own
pooled embeddings stand in for an embedding model here: no embedding GGUF can be fetched in the tests)."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from document_files import pdf_bytes
from serve_process import MODEL_NAME, serving

EMBED = "/v1/embeddings"
CHAT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def served_with_embeddings(starter_model):
    # --max-body above the per-file limit (runtime/api/files.py), so a huge file meets that limit, not the body's.
    with serving(starter_model, "--parallel", "1", "--embedding-model", str(starter_model), "--max-body", str(24 * 1024 * 1024)) as server:
        yield server


def embed(server, payload):
    reply = server.http("POST", EMBED, {"model": MODEL_NAME, **payload}, timeout=300)
    assert reply.status == 200, reply.body[:300]
    return reply.json()


def error_of(reply, status: int) -> dict:
    assert reply.status == status, (reply.status, reply.body[:300])
    return reply.json()["error"]


def test_the_same_text_embedded_twice_and_in_a_batch_gives_the_same_vector(served_with_embeddings):
    texts = ["The ferry leaves from pier four.", "Bananas are yellow.", "The ferry leaves from pier four."]
    once = embed(served_with_embeddings, {"input": texts[0]})
    again = embed(served_with_embeddings, {"input": texts[0]})
    batch = embed(served_with_embeddings, {"input": texts})
    singles = [embed(served_with_embeddings, {"input": t}) for t in texts[1:]]
    assert once["object"] == "list" and once["model"] == MODEL_NAME and once["data"][0]["index"] == 0
    assert once["data"][0]["embedding"] == again["data"][0]["embedding"]
    assert [row["index"] for row in batch["data"]] == [0, 1, 2]
    assert [row["embedding"] for row in batch["data"]] == [once["data"][0]["embedding"], *(one["data"][0]["embedding"] for one in singles)]
    vector = np.array(once["data"][0]["embedding"])
    assert vector.shape == (576,) and abs(np.linalg.norm(vector) - 1.0) < 1e-5
    assert batch["usage"]["prompt_tokens"] == batch["usage"]["total_tokens"] == once["usage"]["prompt_tokens"] + sum(one["usage"]["prompt_tokens"] for one in singles)


def test_base64_encoding_is_the_same_vector_as_little_endian_float32(served_with_embeddings):
    as_float = embed(served_with_embeddings, {"input": "pier four"})["data"][0]["embedding"]
    as_base64 = embed(served_with_embeddings, {"input": "pier four", "encoding_format": "base64"})["data"][0]["embedding"]
    assert np.frombuffer(base64.b64decode(as_base64), dtype="<f4").tolist() == pytest.approx(as_float, abs=0)


@pytest.mark.parametrize(
    "payload, status, param",
    [
        ({"input": []}, 400, "input"),
        ({"input": ["fine", ""]}, 400, "input[1]"),
        ({"input": [[1, 2, 3]]}, 400, "input"),
        ({"input": 5}, 400, "input"),
        ({"input": "x", "encoding_format": "binary"}, 400, "encoding_format"),
        ({"input": "x", "dimensions": 64}, 400, "dimensions"),
        ({"input": "word " * 600}, 400, "input[0]"),
        ({"input": "x", "model": "text-embedding-3-small"}, 404, "model"),
    ],
)
def test_bad_embedding_requests_are_a_clear_4xx(served_with_embeddings, payload, status, param):
    reply = served_with_embeddings.http("POST", EMBED, {"model": MODEL_NAME, **payload})
    error = error_of(reply, status)
    assert error["param"] == param and error["message"]
    assert embed(served_with_embeddings, {"input": "still serving"})["data"]


def file_part(name: str, data: bytes, mime: str | None = None) -> dict:
    encoded = base64.b64encode(data).decode()
    return {"type": "file", "file": {"filename": name, "file_data": f"data:{mime};base64,{encoded}" if mime else encoded}}


def chat(server, content, max_tokens: int = 4):
    body = {"model": MODEL_NAME, "messages": [{"role": "user", "content": content}], "max_tokens": max_tokens, "temperature": 0.0}
    return server.http("POST", CHAT, body, timeout=300)


def test_a_pdf_file_part_that_fits_goes_into_the_prompt_whole(served_with_embeddings):
    question = {"type": "text", "text": "What is the vault code?"}
    plain = chat(served_with_embeddings, [question]).json()["usage"]["prompt_tokens"]
    pdf = pdf_bytes([["The vault code is 4817."], ["The garden gate is green."]])
    with_file = chat(served_with_embeddings, [file_part("vault.pdf", pdf, "application/pdf"), question])
    assert with_file.status == 200, with_file.body[:300]
    assert with_file.json()["usage"]["prompt_tokens"] > plain + 12  # two pages of text, and their wrapper


def test_a_file_part_too_large_for_the_context_is_answered_from_retrieved_chunks(served_with_embeddings):
    paragraphs = [f"Paragraph {i}: the lighthouse keeper counted {i * 7} ships passing the northern rocks that night." for i in range(160)]
    text = "\n\n".join(paragraphs).encode()  # about 4,000 tokens: four times the served context (1,024)
    reply = chat(served_with_embeddings, [file_part("log.txt", text), {"type": "text", "text": "How many ships in paragraph 42?"}])
    assert reply.status == 200, reply.body[:300]
    assert reply.json()["usage"]["prompt_tokens"] <= 1024 // 2 + 100  # the chunks that fit half the context, not the file


def test_without_an_embedding_model_a_file_part_too_large_is_answered_from_chunks_found_by_its_words(served):
    # `served` (tests/runtime/api/conftest.py) has no embedding model; before, this request was refused.
    paragraphs = [f"Paragraph {i}: the lighthouse keeper counted {i * 7} ships passing the northern rocks that night." for i in range(160)]
    reply = chat(served, [file_part("log.txt", "\n\n".join(paragraphs).encode()), {"type": "text", "text": "How many ships in paragraph 42?"}])
    assert reply.status == 200, reply.body[:300]
    assert reply.json()["usage"]["prompt_tokens"] <= 1024 // 2 + 100  # the chunks that fit half the context, not the file


@pytest.mark.parametrize(
    "part, status, code",
    [
        ({"type": "file", "file": {"filename": "a.txt", "file_data": base64.b64encode(b"hello there, a file")[:-3].decode()}}, 400, "invalid_base64"),
        (file_part("photo.png", b"\x89PNG\r\n\x1a\n", "image/png"), 400, "unsupported_file_type"),
        (file_part("program", b"\x7fELF\x02\x01\x01\x00" + bytes(64)), 400, "invalid_file"),
        (file_part("broken.pdf", b"%PDF-1.4 cut short", "application/pdf"), 400, "invalid_file"),
        ({"type": "file", "file": {"file_id": "file-abc123"}}, 400, None),
        ({"type": "file", "file": {"filename": "huge.txt", "file_data": "QUFB" * (17 * 1024 * 1024 // 3)}}, 413, "file_too_large"),
    ],
)
def test_bad_file_parts_are_a_clear_4xx_naming_the_part(served_with_embeddings, part, status, code):
    error = error_of(chat(served_with_embeddings, [part, {"type": "text", "text": "Read it."}]), status)
    assert error["param"].startswith("messages[0].content[0].file") and error["code"] == code
    assert chat(served_with_embeddings, "Still there?").status == 200
