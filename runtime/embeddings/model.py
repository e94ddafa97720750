"""An embedding model in its own llama.cpp context, beside the chat model: vectors for chunks, questions and /v1/embeddings.

Its own context (llama_cpp.Llama with embedding=True), never a sequence of the chat model's: the two
models differ (a small bge/nomic encoder against a chat model), an embedding pass must not disturb a
reply's KV cells, and pooling is a property of the context. The model's own pooling (CLS for bge,
mean for nomic) is kept; a model that declares none (a chat model, such as the starter model used for
plumbing in the tests) is mean-pooled.

Each text is embedded alone, one decode per text: a text's vector is then the same whether it came
in a batch or by itself (batched rows may differ in the last bits), which /v1/embeddings promises and
the chunk cache relies on. Vectors are L2-normalised, so a dot product is the cosine similarity.
Calls are serialised by a lock: a llama.cpp context is not for two threads at once.

Unless the load names a thread count, each text is embedded on every core while no reply is
decoding, and on half of them while one is (`busy`, asked before each text): a document is most
often attached while the chat model waits for the question, and the two models on every core at
once would each wait on the other's threads. Threads change only how a product's rows are shared
out, never a sum's order, so a vector is the same either way (tests/runtime/documents/test_embedding_threads.py).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Callable

import llama_cpp
import numpy as np

from runtime.gguf.model_file import check_model_file
from runtime.cores import default_threads
from runtime.models.identity import file_identity
from runtime.protocol import ErrorCode, RpcError

EMBEDDING_CONTEXT = 512  # tokens a text may have: bge-small's and most small encoders' training length


class TextTooLong(ValueError):
    def __init__(self, index: int, tokens: int, limit: int):
        super().__init__(f"input[{index}] has {tokens} tokens; the embedding model takes at most {limit}")
        self.index, self.tokens, self.limit = index, tokens, limit


@dataclass
class Embedded:
    vectors: np.ndarray  # (texts, dimensions) float32, each row of length 1
    tokens: int  # tokens read, all texts together


class EmbeddingModel:
    def __init__(self, path: str, n_threads: int | None = None, n_ctx: int = EMBEDDING_CONTEXT, busy: Callable[[], bool] = lambda: False):
        """`n_threads`: always this many; None: every core, or half of them while `busy()` (a reply is decoding)."""
        path = os.path.abspath(os.path.expanduser(path))
        check_model_file(path)
        self.path = path
        self.name = os.path.basename(path)
        self.identity = file_identity(path)
        cores = default_threads()
        self._alone, self._beside_a_reply = (n_threads, n_threads) if n_threads else (cores, max(1, cores // 2))
        self._busy = busy
        self.threads = threads = self._beside_a_reply  # what the last text was embedded with
        common = dict(model_path=path, embedding=True, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
        try:
            llama = llama_cpp.Llama(**common)  # type: ignore[arg-type]  # the keyword arguments above are Llama's
            if llama.pooling_type() == llama_cpp.LLAMA_POOLING_TYPE_NONE:
                llama.close()
                llama = llama_cpp.Llama(pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN, **common)  # type: ignore[arg-type]
        except ValueError as exc:  # llama-cpp-python's word for a model or context that failed to load
            raise RpcError(ErrorCode.INVALID_MODEL, f"{self.name} cannot be loaded as an embedding model: {exc}", {"path": path}) from None
        self._llama = llama
        self.n_ctx = n_ctx
        self.dimensions = int(llama.n_embd())
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return len(self._llama.tokenize(text.encode("utf-8"), add_bos=True, special=False))

    def embed(self, texts: list[str], truncate: bool = False, progress: Callable[[int, int], None] | None = None) -> Embedded:
        """Each text's vector; a text over the context is cut to it (`truncate`) or refused with TextTooLong.
        `progress(done, total)` after each text."""
        rows: list[np.ndarray] = []
        total = 0
        with self._lock:
            for index, text in enumerate(texts):
                self._use_threads(self._beside_a_reply if self._busy() else self._alone)
                tokens = self._llama.tokenize(text.encode("utf-8"), add_bos=True, special=False)
                if len(tokens) > self.n_ctx and not truncate:
                    raise TextTooLong(index, len(tokens), self.n_ctx)
                total += min(len(tokens), self.n_ctx)
                vector = np.asarray(self._llama.embed(text, normalize=False, truncate=True), dtype=np.float32)
                norm = float(np.linalg.norm(vector))
                rows.append(vector / norm if norm > 0 else vector)
                if progress is not None:
                    progress(index + 1, len(texts))
        vectors = np.vstack(rows) if rows else np.zeros((0, self.dimensions), dtype=np.float32)
        return Embedded(vectors, total)

    def _use_threads(self, threads: int) -> None:
        if threads != self.threads:
            llama_cpp.llama_set_n_threads(self._llama.ctx, threads, threads)
            self.threads = threads

    def close(self) -> None:
        with self._lock:
            self._llama.close()
