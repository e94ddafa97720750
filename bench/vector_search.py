"""Chunk search: the numpy scan Lokal uses (runtime/documents/index.py) against sqlite-vec's vec0 table.

Both are exact (brute-force) k-nearest searches over the same unit vectors, so the figures compare
only their cost: time to store the vectors, median time of one top-k query (the numpy side includes
nothing but the matrix-vector product and the partial sort, its matrix read once per document and
kept, as the index does), and whether both return the same chunks.

    .venv/bin/python bench/vector_search.py [--sizes 1000 10000 100000] [--dim 384] [--k 8] [--queries 50]

Needs `sqlite-vec` (pip install -e .[bench]). Prints one JSON object. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def numpy_side(db_path: Path, vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[dict, list[list[int]]]:
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE chunks (idx INTEGER PRIMARY KEY, vector BLOB NOT NULL)")
    started = time.perf_counter()
    with db:
        db.executemany("INSERT INTO chunks VALUES (?, ?)", ((i, v.tobytes()) for i, v in enumerate(vectors)))
    stored = time.perf_counter() - started
    started = time.perf_counter()
    matrix = np.vstack([np.frombuffer(blob, dtype=np.float32) for (blob,) in db.execute("SELECT vector FROM chunks ORDER BY idx")])
    loaded = time.perf_counter() - started
    times, results = [], []
    for q in queries:
        started = time.perf_counter()
        scores = matrix @ q
        top = np.argpartition(-scores, k)[:k]
        top = top[np.argsort(-scores[top])]
        times.append(time.perf_counter() - started)
        results.append(top.tolist())
    db.close()
    return {"store_s": stored, "load_matrix_s": loaded, "query_ms_median": statistics.median(times) * 1000}, results


def extensions_loadable() -> bool:
    """Whether this Python's sqlite3 can load extensions at all (many builds cannot: python.org's macOS one, some pyenv ones)."""
    return hasattr(sqlite3.connect(":memory:"), "enable_load_extension")


def sqlite_vec_side(db_path: Path, vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[dict, list[list[int]]]:
    import sqlite_vec

    db = sqlite3.connect(db_path)
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.enable_load_extension(False)
    db.execute(f"CREATE VIRTUAL TABLE chunks USING vec0(embedding float[{vectors.shape[1]}] distance_metric=cosine)")
    started = time.perf_counter()
    with db:
        db.executemany("INSERT INTO chunks(rowid, embedding) VALUES (?, ?)", ((i, v.tobytes()) for i, v in enumerate(vectors)))
    stored = time.perf_counter() - started
    times, results = [], []
    for q in queries:
        started = time.perf_counter()
        rows = db.execute("SELECT rowid FROM chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance", (q.tobytes(), k)).fetchall()
        times.append(time.perf_counter() - started)
        results.append([r[0] for r in rows])
    db.close()
    return {"store_s": stored, "query_ms_median": statistics.median(times) * 1000}, results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--dim", type=int, default=384)  # bge-small's
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    report: dict = {"dim": args.dim, "k": args.k, "queries": args.queries, "sqlite_extensions_loadable": extensions_loadable(), "sizes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            vectors = unit_rows(rng, n, args.dim)
            queries = unit_rows(rng, args.queries, args.dim)
            np_figures, np_results = numpy_side(Path(tmp) / f"np-{n}.sqlite3", vectors, queries, args.k)
            if not report["sqlite_extensions_loadable"]:
                report["sizes"][str(n)] = {"numpy": np_figures, "sqlite_vec": "not loadable: this Python's sqlite3 was built without extension loading"}
                continue
            vec_figures, vec_results = sqlite_vec_side(Path(tmp) / f"vec-{n}.sqlite3", vectors, queries, args.k)
            same = sum(a == b for a, b in zip(np_results, vec_results)) / len(queries)
            report["sizes"][str(n)] = {"numpy": np_figures, "sqlite_vec": vec_figures, "same_top_k": same}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
