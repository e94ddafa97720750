"""Chunks cut on paragraph and code-block boundaries, with the lines they span."""

from __future__ import annotations

from runtime.documents.chunking import blocks, chunk_text


def test_a_fenced_code_block_with_blank_lines_is_one_block():
    text = "Intro line.\n\n```python\ndef f():\n\n    return 1\n```\n\nAfter."
    assert blocks(text) == [(0, 0), (2, 6), (8, 8)]


def test_chunks_never_cut_a_paragraph_that_fits_and_give_their_lines():
    paragraphs = [f"Paragraph {i}" + " word" * 30 for i in range(20)]
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(text, max_chars=400)
    assert len(chunks) > 3
    lines = text.split("\n")
    for chunk in chunks:
        assert len(chunk.text) <= 400
        assert chunk.text == "\n".join(lines[chunk.first_line - 1 : chunk.last_line])
        assert chunk.text.startswith("Paragraph") and chunk.text.endswith("word")
    assert "".join(c.text.replace("\n\n", "") for c in chunks) == text.replace("\n\n", "")


def test_a_block_longer_than_a_chunk_is_cut_between_lines():
    text = "\n".join(f"row {i}, " + "x" * 50 for i in range(40))
    chunks = chunk_text(text, max_chars=300)
    assert all(len(c.text) <= 300 for c in chunks)
    assert [c.first_line for c in chunks] == sorted(c.first_line for c in chunks)
    assert chunks[0].first_line == 1 and chunks[-1].last_line == 40
    assert all(b.first_line == a.last_line + 1 for a, b in zip(chunks, chunks[1:]))
