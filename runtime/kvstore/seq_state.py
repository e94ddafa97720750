"""Copies one sequence's KV state out of a llama.cpp context and back in (llama_state_seq_get_data / _set_data).

Only the KV cells of the one sequence are copied, not `Llama.save_state()`'s
whole-context blob, which also drags along an uninitialised n_batch x n_vocab
logits array. A restored state holds no logits, so the engine always evaluates
at least the prompt's last token after a restore (prepare_prompt does).

llama_state_seq_get_data copies every cell of a sequence, and _set_data first
empties the sequence it loads into. So a part of a sequence (what one turn added,
positions [start, n)) goes through the context's scratch sequence
(LlamaModel.scratch_seq_id, which no slot uses): llama_memory_seq_cp tags those
cells with the scratch sequence too (no KV is copied, the cache is unified), the
scratch sequence's state is copied out, and the tags are removed. Loading a
segment goes the other way: into the scratch sequence, then its cells are tagged
with the target sequence, whose own cells from `start` on were removed first.
The cells and their positions end up exactly as in a sequence decoded in one go.
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence as Seq

import llama_cpp
import numpy as np

from runtime.llama.llama_model import KvSequence, LlamaModel, as_sequence
from runtime.kvstore.state_file import Segment


def _ptr(buf: np.ndarray) -> Any:
    return buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))


def _get(ctx: Any, seq_id: int) -> np.ndarray:
    size = llama_cpp.llama_state_seq_get_size(ctx, seq_id)
    buf = np.empty(size, dtype=np.uint8)
    written = llama_cpp.llama_state_seq_get_data(ctx, _ptr(buf), size, seq_id)
    if written == 0:
        raise RuntimeError("llama_state_seq_get_data copied nothing")
    return buf[:written]


def copy_out(model: LlamaModel | KvSequence, start: int = 0) -> np.ndarray:
    """The bytes of the sequence's state: the KV of its `tokens[start:]` (all of them by default)."""
    seq = as_sequence(model)
    ctx = seq.model.context.ctx
    if start == 0:
        return _get(ctx, seq.seq_id)
    if not 0 < start < len(seq.tokens):
        raise ValueError(f"start {start}: the sequence holds {len(seq.tokens)} tokens")
    memory, scratch = seq.model.memory, seq.model.scratch_seq_id
    llama_cpp.llama_memory_seq_cp(memory, seq.seq_id, scratch, start, -1)
    try:
        return _get(ctx, scratch)
    finally:
        llama_cpp.llama_memory_seq_rm(memory, scratch, -1, -1)


def copy_in(model: LlamaModel | KvSequence, tokens: np.ndarray, segments: Seq[Segment] | np.ndarray) -> bool:
    """Replace the sequence's cache with a saved state (a whole one, or a chain of segments applied in order);
    False (and an empty sequence) if llama.cpp refuses it.

    The sequence's `tokens` become exactly the restored ids, so the next decode starts
    at position len(tokens), right after the restored cells.
    """
    seq = as_sequence(model)
    if isinstance(segments, np.ndarray):
        segments = [Segment(0, tokens, segments)]
    seq.clear()
    ctx, memory, scratch = seq.model.context.ctx, seq.model.memory, seq.model.scratch_seq_id
    for segment in segments:
        state = np.ascontiguousarray(segment.state, dtype=np.uint8)
        end = segment.start + len(segment.tokens)
        if segment.start == 0:
            loaded = llama_cpp.llama_state_seq_set_data(ctx, _ptr(state), state.size, seq.seq_id) != 0
        else:
            llama_cpp.llama_memory_seq_rm(memory, seq.seq_id, segment.start, -1)
            loaded = llama_cpp.llama_state_seq_set_data(ctx, _ptr(state), state.size, scratch) != 0
            # Exactly the segment's positions, or the sequence would end up with a gap or cells twice over.
            loaded = loaded and _holds(memory, scratch, segment.start, end)
            if loaded:
                llama_cpp.llama_memory_seq_cp(memory, scratch, seq.seq_id, -1, -1)
            llama_cpp.llama_memory_seq_rm(memory, scratch, -1, -1)
        if not loaded or not _holds(memory, seq.seq_id, 0, end):
            seq.clear()
            return False
    # The cells must hold positions 0..n-1 and nothing else, or `tokens` would lie about the cache.
    if not _holds(memory, seq.seq_id, 0, len(tokens)):
        seq.clear()
        return False
    seq.tokens.extend(int(t) for t in tokens)
    return True


def _holds(memory: Any, seq_id: int, start: int, end: int) -> bool:
    return bool(llama_cpp.llama_memory_seq_pos_min(memory, seq_id) == start and llama_cpp.llama_memory_seq_pos_max(memory, seq_id) == end - 1)
