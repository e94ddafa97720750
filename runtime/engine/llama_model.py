"""A loaded model: llama.cpp's model, context and batch, and the token sequence held in its KV cache.

This is the only module that talks to llama.cpp's decode API. It keeps
`tokens`, the exact token ids whose keys and values sit in the cache
(sequence 0), so callers can reuse the longest common prefix and rewind.
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

import llama_cpp
import llama_cpp._internals as internals
from llama_cpp._logger import set_verbose

from runtime.gguf.reader import GGUFHeader

KV_TYPES = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0, "q4_0": llama_cpp.GGML_TYPE_Q4_0}
SEQ = 0  # the one sequence the engine decodes into


# llama.cpp's own log goes to stderr; it is chatty at INFO, so only errors unless asked for.
set_verbose(os.environ.get("LOKAL_LLAMA_LOG", "") == "debug")


class DecodeAborted(Exception):
    """llama_decode stopped because the abort callback asked it to (a cancel)."""


class DecodeError(RuntimeError):
    pass


@dataclass(frozen=True)
class LoadSettings:
    path: str
    n_ctx: int
    n_gpu_layers: int
    type_k: str
    type_v: str
    flash_attn: bool | None
    n_threads: int
    n_batch: int = 512
    swa_full: bool = True  # rewinding past a sliding window silently corrupts output otherwise


def default_threads() -> int:
    try:
        import psutil

        physical = psutil.cpu_count(logical=False)
    except Exception:
        physical = None
    return max(1, physical or os.cpu_count() or 1)


class LlamaModel:
    def __init__(self, settings: LoadSettings, header: GGUFHeader, on_progress: Callable[[float], bool] | None = None):
        self.settings = settings
        self.header = header
        llama_cpp.llama_backend_init()

        model_params = llama_cpp.llama_model_default_params()
        model_params.n_gpu_layers = settings.n_gpu_layers if settings.n_gpu_layers >= 0 else 0x7FFFFFFF
        if on_progress is not None:
            # The callback object must outlive the load: keep a reference.
            self._progress_cb = llama_cpp.llama_progress_callback(lambda p, _data: bool(on_progress(float(p))))
            model_params.progress_callback = self._progress_cb
        self._model = internals.LlamaModel(path_model=settings.path, params=model_params, verbose=False)

        ctx_params = llama_cpp.llama_context_default_params()
        ctx_params.n_ctx = settings.n_ctx
        ctx_params.n_batch = min(settings.n_batch, settings.n_ctx)
        ctx_params.n_ubatch = ctx_params.n_batch
        ctx_params.n_threads = settings.n_threads
        ctx_params.n_threads_batch = settings.n_threads
        ctx_params.type_k = KV_TYPES[settings.type_k]
        ctx_params.type_v = KV_TYPES[settings.type_v]
        ctx_params.swa_full = settings.swa_full
        flash = settings.flash_attn
        if flash is None and settings.type_v != "f16":
            flash = True  # llama.cpp refuses a quantized V cache without flash attention
        if flash is not None:
            ctx_params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self._ctx = internals.LlamaContext(model=self._model, params=ctx_params, verbose=False)
        self.n_batch = ctx_params.n_batch
        self._batch = internals.LlamaBatch(n_tokens=self.n_batch, embd=0, n_seq_max=1, verbose=False)

        self.vocab = self._model.vocab
        self.n_vocab = self._model.n_vocab()
        self.n_ctx = llama_cpp.llama_n_ctx(self._ctx.ctx)
        self.can_rewind = not (llama_cpp.llama_model_is_recurrent(self._model.model) or llama_cpp.llama_model_is_hybrid(self._model.model))
        self.tokens: list[int] = []
        self._pieces: dict[int, bytes] = {}
        self._piece_buf = ctypes.create_string_buffer(256)
        self._abort_event: threading.Event | None = None
        self._abort_cb = llama_cpp.ggml_abort_callback(lambda _data: bool(self._abort_event is not None and self._abort_event.is_set()))

    # ---- identity ----------------------------------------------------
    @property
    def n_params(self) -> int:
        return int(self._model.n_params())

    def token_text(self, token: int) -> str:
        return self._model.token_get_text(token)

    @property
    def bos_token(self) -> int:
        return self._model.token_bos()

    @property
    def eos_token(self) -> int:
        return self._model.token_eos()

    @property
    def adds_bos(self) -> bool:
        return bool(self._model.add_bos_token())

    # ---- text <-> tokens -----------------------------------------------
    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        return self._model.tokenize(text.encode("utf-8"), add_bos, special)

    def piece(self, token: int) -> bytes:
        """The bytes a token stands for (special tokens render as nothing)."""
        piece = self._pieces.get(token)
        if piece is None:
            n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece_buf, len(self._piece_buf), 0, False)
            piece = self._piece_buf.raw[: max(n, 0)]
            self._pieces[token] = piece
        return piece

    def is_end_of_generation(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))

    # ---- the KV cache ------------------------------------------------
    def common_prefix(self, tokens: Sequence[int]) -> int:
        n = 0
        for a, b in zip(self.tokens, tokens):
            if a != b:
                break
            n += 1
        return n

    def truncate(self, n: int) -> int:
        """Drop everything after the first n cached tokens; returns how many are kept.

        A model that cannot remove part of its cache (recurrent, hybrid) is cleared
        entirely: re-evaluating is slower, but never wrong.
        """
        if n >= len(self.tokens):
            return len(self.tokens)
        if self.can_rewind and llama_cpp.llama_memory_seq_rm(self._ctx.memory, SEQ, n, -1):
            del self.tokens[n:]
            return n
        llama_cpp.llama_memory_clear(self._ctx.memory, True)
        self.tokens.clear()
        return 0

    def clear(self) -> None:
        llama_cpp.llama_memory_clear(self._ctx.memory, True)
        self.tokens.clear()

    # ---- evaluation --------------------------------------------------
    def decode(self, tokens: Sequence[int], *, all_logits: bool = False, abort: threading.Event | None = None) -> None:
        """Append `tokens` to the cache in one llama_decode call (len <= n_batch).

        Logits are kept for the last token, or for every token with all_logits
        (speculative verification). With `abort`, llama.cpp polls the event
        between graph nodes, so a long batch stops soon after a cancel.
        """
        n = len(tokens)
        if n == 0:
            return
        if n > self.n_batch:
            raise ValueError(f"batch of {n} tokens exceeds n_batch {self.n_batch}")
        if len(self.tokens) + n > self.n_ctx:
            raise DecodeError(f"the context is full ({self.n_ctx} tokens)")
        batch = self._batch.batch
        pos0 = len(self.tokens)
        batch.n_tokens = n
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = pos0 + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = SEQ
            batch.logits[i] = all_logits
        batch.logits[n - 1] = True
        if abort is not None:
            self._abort_event = abort
            llama_cpp.llama_set_abort_callback(self._ctx.ctx, self._abort_cb, None)
        try:
            rc = llama_cpp.llama_decode(self._ctx.ctx, batch)
        finally:
            if abort is not None:
                # The callback costs a trip into Python per graph node: off for single-token steps.
                llama_cpp.llama_set_abort_callback(self._ctx.ctx, llama_cpp.ggml_abort_callback(0), None)
                self._abort_event = None
        if rc != 0:
            # Whatever part of the batch reached the cache is dropped, so `tokens` stays the truth.
            if self.can_rewind:
                llama_cpp.llama_memory_seq_rm(self._ctx.memory, SEQ, pos0, -1)
            else:
                self.clear()
            if rc == 2:
                raise DecodeAborted()
            raise DecodeError(f"llama_decode failed with code {rc}")
        self.tokens.extend(tokens)

    def logits(self, i: int = -1) -> np.ndarray:
        """A zero-copy view of the logits of output row i of the last decode (-1: the last)."""
        ptr = llama_cpp.llama_get_logits_ith(self._ctx.ctx, i)
        if not ptr:
            raise DecodeError(f"no logits for output {i}")
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    # ---- sizes -------------------------------------------------------
    @property
    def kv_bytes_per_token(self) -> int:
        return self.header.kv_bytes_per_token(self.settings.type_k, self.settings.type_v)

    @property
    def context(self):
        return self._ctx

    def close(self) -> None:
        self._batch.close()
        self._ctx.close()
        self._model.close()
        self.tokens.clear()
