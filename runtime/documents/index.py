"""Chunk vectors in SQLite, searched with numpy: a document embedded once per embedding model, kept across conversations.

Rows are keyed by (the file's sha256, the embedding model's file identity), so a document attached
again, in this conversation or another, or sent again through the API, is found already embedded; a
different embedding model embeds it anew (its vectors mean something else). `indexed` marks a
document complete only after all its chunks are in, in one transaction, so a crash halfway leaves
nothing that looks finished.

Search is hybrid: the vector ranking and a keyword ranking (SQLite's FTS5, BM25) are fused by their
reciprocal ranks (RRF, k=60), as Open WebUI and other local RAG tools do. Names, numbers and rare words
that a small embedding model blurs are found by the words; paraphrases by the vectors. The recall test
(tests/runtime/documents/test_retrieval_recall.py) states both figures.

The vector half is exact: a document's vectors are read once into a numpy matrix (kept in memory per document)
and scored with one matrix-vector product. bench/vector_search.py judges this against sqlite-vec: for
the sizes attachments have (thousands of chunks), numpy's scan is as fast or faster and needs no
extension loaded into SQLite; sqlite-vec's brute-force KNN is what it would offer, not an ANN index.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from runtime.documents.chunking import Chunk
from runtime.private_files import create_private_file

RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al. 2009): rank 1 weighs 1/61
RRF_DEPTH = 50  # how deep each ranking is read before fusing
WORDS_ONLY = "words"  # the `model` of chunks kept for keyword search alone, without vectors (no embedding model)

SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    doc TEXT NOT NULL, model TEXT NOT NULL, idx INTEGER NOT NULL,
    first_line INTEGER NOT NULL, last_line INTEGER NOT NULL, page INTEGER NOT NULL, last_page INTEGER NOT NULL,
    text TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (doc, model, idx)
);
-- The same chunks' words, for the keyword half of a hybrid search (rowid: the chunk's row in `chunks`).
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_words USING fts5(text, content='chunks', content_rowid='rowid');
CREATE TABLE IF NOT EXISTS indexed (
    doc TEXT NOT NULL, model TEXT NOT NULL, chunks INTEGER NOT NULL, dimensions INTEGER NOT NULL,
    embedded_ns INTEGER NOT NULL,  -- when its chunks were embedded: a reuse leaves it as it was
    PRIMARY KEY (doc, model)
);
"""


@dataclass
class Hit:
    doc: str
    chunk: int
    score: float
    text: str
    first_line: int
    last_line: int
    page: int  # the page it starts on (0: not paged)
    last_page: int  # the page it ends on


class ChunkIndex:
    def __init__(self, path: Path):
        self.path = path
        create_private_file(path)  # 0600 before SQLite makes it with the umask's mode (its -wal and -shm follow it)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()
        self._matrices: dict[tuple[str, str], tuple[np.ndarray, list[Hit]]] = {}

    def has(self, doc: str, model: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM indexed WHERE doc = ? AND model = ?", (doc, model)).fetchone() is not None

    def add(self, doc: str, model: str, chunks: list[Chunk], pages: list[tuple[int, int]], vectors: np.ndarray) -> None:
        """Store a document's chunks, each with its (first, last) page ((0, 0): not paged) and vector, replacing any before."""
        rows = [
            (doc, model, c.index, c.first_line, c.last_line, first, last, c.text, np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for c, (first, last), v in zip(chunks, pages, vectors)
        ]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                old = self._db.execute("SELECT rowid, text FROM chunks WHERE doc = ? AND model = ?", (doc, model)).fetchall()
                self._db.executemany("INSERT INTO chunk_words(chunk_words, rowid, text) VALUES ('delete', ?, ?)", old)
                self._db.execute("DELETE FROM chunks WHERE doc = ? AND model = ?", (doc, model))
                self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                self._db.execute("INSERT INTO chunk_words(rowid, text) SELECT rowid, text FROM chunks WHERE doc = ? AND model = ?", (doc, model))
                self._db.execute("INSERT OR REPLACE INTO indexed VALUES (?, ?, ?, ?, ?)", (doc, model, len(rows), int(vectors.shape[1]) if len(rows) else 0, time.time_ns()))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._matrices.pop((doc, model), None)

    def search(self, docs: list[str], model: str, query: np.ndarray | None, k: int, words: str = "") -> list[Hit]:
        """The `k` best chunks of `docs` for `query` (a unit vector) and, when given, its `words`; best first.
        Without `query` (chunks kept without vectors: WORDS_ONLY) by the words alone."""
        if query is None:
            hits = {(h.doc, h.chunk): h for doc in docs for h in self._matrix(doc, model)[1]}
            return [hits[key] for key in self.keyword_ranks(docs, model, words, k)]
        by_vector = self.nearest(docs, model, query, max(k, RRF_DEPTH))
        if not words:
            return by_vector[:k]
        by_words = self.keyword_ranks(docs, model, words, max(k, RRF_DEPTH))
        fused: dict[tuple[str, int], float] = {}
        for ranking in ([(h.doc, h.chunk) for h in by_vector], by_words):
            for rank, key in enumerate(ranking):
                fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
        hits = {(h.doc, h.chunk): h for doc in docs for h in self._matrix(doc, model)[1]}
        best = sorted(fused, key=lambda key: (-fused[key], key))[:k]
        return [Hit(**{**hits[key].__dict__, "score": fused[key]}) for key in best]

    def keyword_ranks(self, docs: list[str], model: str, words: str, k: int) -> list[tuple[str, int]]:
        """(doc, chunk) of the `k` chunks that match `words` best by BM25 (any word matches; rarer words weigh more)."""
        terms = [t for t in re.findall(r"\w+", words.lower()) if len(t) > 1]
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in dict.fromkeys(terms))
        rows: list[tuple[float, str, int]] = []
        with self._lock:
            for doc in docs:  # one query a document: BM25 scores come from one table, so they compare across them
                rows += self._db.execute(
                    "SELECT bm25(chunk_words), c.doc, c.idx FROM chunk_words JOIN chunks c ON c.rowid = chunk_words.rowid "
                    "WHERE chunk_words MATCH ? AND c.model = ? AND c.doc = ? ORDER BY bm25(chunk_words) LIMIT ?",
                    (match, model, doc, k),
                ).fetchall()
        rows.sort()  # bm25() is lower for a better match
        return [(doc, idx) for _, doc, idx in rows[:k]]

    def opening(self, docs: list[str], model: str, k: int) -> list[Hit]:
        """The first `k` chunks of `docs`, in order: what a search that found nothing falls back on."""
        return [hit for doc in docs for hit in self._matrix(doc, model)[1]][:k]

    def nearest(self, docs: list[str], model: str, query: np.ndarray, k: int) -> list[Hit]:
        """The `k` chunks of `docs` most similar to `query` (a unit vector), best first."""
        candidates: list[Hit] = []
        scores: list[np.ndarray] = []
        for doc in docs:
            matrix, hits = self._matrix(doc, model)
            if len(hits):
                scores.append(matrix @ query.astype(np.float32))
                candidates.extend(hits)
        if not candidates:
            return []
        flat = np.concatenate(scores)
        order = np.argsort(-flat, kind="stable")[:k]
        return [Hit(**{**candidates[i].__dict__, "score": float(flat[i])}) for i in order]

    def _matrix(self, doc: str, model: str) -> tuple[np.ndarray, list[Hit]]:
        with self._lock:
            cached = self._matrices.get((doc, model))
            if cached is not None:
                return cached
            rows = self._db.execute(
                "SELECT idx, first_line, last_line, page, last_page, text, vector FROM chunks WHERE doc = ? AND model = ? ORDER BY idx", (doc, model)
            ).fetchall()
            hits = [Hit(doc, idx, 0.0, text, first, last, page, last_page) for idx, first, last, page, last_page, text, _ in rows]
            matrix = np.vstack([np.frombuffer(row[6], dtype=np.float32) for row in rows]) if rows else np.zeros((0, 0), dtype=np.float32)
            self._matrices[(doc, model)] = (matrix, hits)
            return matrix, hits

    def close(self) -> None:
        with self._lock:
            self._db.close()
