"""Copies one sequence's KV state out of a llama.cpp context and back in (llama_state_seq_get_data / _set_data).

Only the KV cells of the one sequence are copied, not `Llama.save_state()`'s
whole-context blob, which also drags along an uninitialised n_batch x n_vocab
logits array. A restored state holds no logits, so the engine always evaluates
at least the prompt's last token after a restore (prepare_prompt does).
"""

from __future__ import annotations

import ctypes

import llama_cpp
import numpy as np

from runtime.llama.llama_model import KvSequence, LlamaModel, as_sequence


def _ptr(buf: np.ndarray):
    return buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))


def copy_out(model: LlamaModel | KvSequence) -> np.ndarray:
    """The bytes of the sequence's state (the KV of exactly its `tokens`)."""
    seq = as_sequence(model)
    ctx = seq.model.context.ctx
    size = llama_cpp.llama_state_seq_get_size(ctx, seq.seq_id)
    buf = np.empty(size, dtype=np.uint8)
    written = llama_cpp.llama_state_seq_get_data(ctx, _ptr(buf), size, seq.seq_id)
    if written == 0:
        raise RuntimeError("llama_state_seq_get_data copied nothing")
    return buf[:written]


def copy_in(model: LlamaModel | KvSequence, tokens: np.ndarray, state: np.ndarray) -> bool:
    """Replace the sequence's cache with a saved state; False (and an empty sequence) if llama.cpp refuses it.

    The sequence's `tokens` become exactly the restored ids, so the next decode starts
    at position len(tokens), right after the restored cells.
    """
    seq = as_sequence(model)
    seq.clear()
    state = np.ascontiguousarray(state, dtype=np.uint8)
    ctx = seq.model.context.ctx
    if llama_cpp.llama_state_seq_set_data(ctx, _ptr(state), state.size, seq.seq_id) == 0:
        seq.clear()
        return False
    # The cells must hold positions 0..n-1 and nothing else, or `tokens` would lie about the cache.
    memory = seq.model.memory
    if llama_cpp.llama_memory_seq_pos_min(memory, seq.seq_id) != 0 or llama_cpp.llama_memory_seq_pos_max(memory, seq.seq_id) != len(tokens) - 1:
        seq.clear()
        return False
    seq.tokens.extend(int(t) for t in tokens)
    return True
