"""Copies sequence 0's KV state out of a llama.cpp context and back in (llama_state_seq_get_data / _set_data).

Only the KV cells of the one sequence are copied, not `Llama.save_state()`'s
whole-context blob, which also drags along an uninitialised n_batch x n_vocab
logits array. A restored state holds no logits, so the engine always evaluates
at least the prompt's last token after a restore (prepare_prompt does).
"""

from __future__ import annotations

import ctypes

import llama_cpp
import numpy as np

from runtime.engine.llama_model import SEQ, LlamaModel


def _ptr(buf: np.ndarray):
    return buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))


def copy_out(model: LlamaModel) -> np.ndarray:
    """The bytes of sequence 0's state (the KV of exactly `model.tokens`)."""
    ctx = model.context.ctx
    size = llama_cpp.llama_state_seq_get_size(ctx, SEQ)
    buf = np.empty(size, dtype=np.uint8)
    written = llama_cpp.llama_state_seq_get_data(ctx, _ptr(buf), size, SEQ)
    if written == 0:
        raise RuntimeError("llama_state_seq_get_data copied nothing")
    return buf[:written]


def copy_in(model: LlamaModel, tokens: np.ndarray, state: np.ndarray) -> bool:
    """Replace the cache with a saved state; False (and an empty cache) if llama.cpp refuses it.

    `model.tokens` becomes exactly the restored ids, so the next decode starts at
    position len(tokens), right after the restored cells.
    """
    model.clear()
    state = np.ascontiguousarray(state, dtype=np.uint8)
    ctx = model.context.ctx
    if llama_cpp.llama_state_seq_set_data(ctx, _ptr(state), state.size, SEQ) == 0:
        model.clear()
        return False
    # The cells must hold positions 0..n-1 and nothing else, or `tokens` would lie about the cache.
    memory = model.context.memory
    if llama_cpp.llama_memory_seq_pos_min(memory, SEQ) != 0 or llama_cpp.llama_memory_seq_pos_max(memory, SEQ) != len(tokens) - 1:
        model.clear()
        return False
    model.tokens.extend(int(t) for t in tokens)
    return True
