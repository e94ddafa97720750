"""The chunk index on real SQLite: vectors and words of several documents, a document indexed again, hybrid ranking."""

from __future__ import annotations

import numpy as np

from runtime.documents.chunking import Chunk
from runtime.documents.index import ChunkIndex


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.standard_normal((n, 16)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def chunks(words: list[str]) -> list[Chunk]:
    return [Chunk(i, text, i * 3 + 1, i * 3 + 2) for i, text in enumerate(words)]


def test_words_and_vectors_rank_chunks_across_documents_and_reindexing_replaces_them(tmp_path):
    rng = np.random.default_rng(1)
    index = ChunkIndex(tmp_path / "chunks.sqlite3")
    a = ["the harbour opens at seven", "ferries leave from pier four", "the lighthouse is white"]
    b = ["minutes of the meeting", "the budget for the lighthouse was approved", "chairs cost money"]
    vectors_a, vectors_b = unit(rng, 3), unit(rng, 3)
    index.add("doc-a", "m", chunks(a), [(0, 0)] * 3, vectors_a)
    index.add("doc-b", "m", chunks(b), [(1, 1), (1, 2), (2, 2)], vectors_b)
    assert index.has("doc-a", "m") and not index.has("doc-a", "other-model")

    assert index.keyword_ranks(["doc-a", "doc-b"], "m", "Which pier do ferries leave from?", 3)[0] == ("doc-a", 1)
    assert {key for key in index.keyword_ranks(["doc-a", "doc-b"], "m", "lighthouse", 5)} == {("doc-a", 2), ("doc-b", 1)}
    assert index.keyword_ranks(["doc-b"], "m", "lighthouse", 5) == [("doc-b", 1)]  # only the documents asked about

    nearest = index.nearest(["doc-a", "doc-b"], "m", vectors_b[2], 1)[0]
    assert (nearest.doc, nearest.chunk, nearest.page, nearest.last_page, nearest.first_line) == ("doc-b", 2, 2, 2, 7)
    best = index.search(["doc-a", "doc-b"], "m", vectors_a[1], 2, words="ferries pier")
    assert (best[0].doc, best[0].chunk) == ("doc-a", 1)  # first by its vector and by its words

    index.add("doc-a", "m", chunks(["a new text about gardens"]), [(0, 0)], unit(rng, 1))
    assert index.keyword_ranks(["doc-a"], "m", "ferries", 3) == []  # the old chunks' words are gone with them
    assert index.keyword_ranks(["doc-a"], "m", "gardens", 3) == [("doc-a", 0)]
    assert len(index.nearest(["doc-a"], "m", vectors_a[0], 10)) == 1
    index.close()


def test_the_chunk_index_and_its_journal_are_private_to_the_user(tmp_path):
    """The chunks hold the user's documents' text: 0600 like the conversation store, whatever the umask."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        index = ChunkIndex(tmp_path / "chunks.sqlite3")
        index.has("0" * 64, "model")  # a read: SQLite opens its -wal and -shm beside the file
    finally:
        os.umask(old)
    files = [p for p in tmp_path.iterdir() if p.name.startswith("chunks.sqlite3")]
    assert files and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files), {p.name: oct(p.stat().st_mode) for p in files}
