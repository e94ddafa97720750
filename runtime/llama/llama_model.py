"""A loaded model: llama.cpp's model, context and batch, and the token sequences held in its KV cache.

This is the only module that talks to llama.cpp's decode API. The context holds
`n_seq` sequences in one unified KV cache (each may grow to `n_ctx` tokens, so
the cache has n_seq x n_ctx cells); each `KvSequence` keeps `tokens`, the exact
token ids whose keys and values it holds, so callers can reuse the longest
common prefix and rewind. One llama_decode call can carry tokens of several
sequences (`decode_slices`): each token carries its sequence's id, and each
sequence reads back only its own logits rows.

`LOKAL_BATCH=single` (tests) decodes each sequence's slice with its own
llama_decode call: the logits then come from the same kernels as when the
sequence runs alone, so outputs can be compared byte for byte.

A LlamaModel used as a sequence (`model.tokens`, `model.decode`, ...) is its
sequence 0: the draft model and single-sequence callers need nothing else.
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence as Seq

import numpy as np

import llama_cpp
import llama_cpp._internals as internals
from llama_cpp._logger import set_verbose

from runtime.llama.token_alignment import common_prefix
from runtime.gguf.reader import GGUFHeader
from runtime.vision import positions

if TYPE_CHECKING:
    from runtime.vision.projector import Projector

KV_TYPES = {"f16": llama_cpp.GGML_TYPE_F16, "q8_0": llama_cpp.GGML_TYPE_Q8_0, "q4_0": llama_cpp.GGML_TYPE_Q4_0}
BATCH_ENV = "LOKAL_BATCH"  # "single": one llama_decode call per sequence (exactness tests)


# llama.cpp's own log goes to stderr; it is chatty at INFO, so only errors unless asked for.
set_verbose(os.environ.get("LOKAL_LLAMA_LOG", "") == "debug")


class DecodeAborted(Exception):
    """llama_decode stopped because the abort callback asked it to (a cancel)."""


class DecodeError(RuntimeError):
    pass


@dataclass(frozen=True)
class LoadSettings:
    path: str
    n_ctx: int  # per sequence
    n_gpu_layers: int
    type_k: str
    type_v: str
    flash_attn: bool | None
    n_threads: int
    n_batch: int = 512
    swa_full: bool = True  # rewinding past a sliding window silently corrupts output otherwise
    n_seq: int = 1  # sequences held at once (conversations decoded together, or kept warm)
    split_mode: str = "layer"  # over several GPU devices (protocol.SplitMode): llama.cpp's default
    main_gpu: int = 0


SPLIT_MODES = {"none": llama_cpp.LLAMA_SPLIT_MODE_NONE, "layer": llama_cpp.LLAMA_SPLIT_MODE_LAYER, "row": llama_cpp.LLAMA_SPLIT_MODE_ROW}


@dataclass(eq=False)
class Slice:
    """One sequence's tokens in a batch; logits for every token (verification) or for the last one only."""

    seq: "KvSequence"
    tokens: Seq[int]
    all_logits: bool = False
    # Tests: one llama_decode call per token, so every logit comes from the same kernels as in
    # plain decoding (LOKAL_SPECULATIVE_VERIFY=single: drafts verified one token at a time).
    singly: bool = False
    rows: list[int] = field(default_factory=list)  # filled by decode_slices: batch indices of its logits rows


class KvSequence:
    """One sequence of the context's KV cache: the token ids it holds, and its logits rows from the last decode."""

    def __init__(self, model: "LlamaModel", seq_id: int):
        self.model = model
        self.seq_id = seq_id
        self.tokens: list[int] = []
        self._rows: list[int] = []  # batch indices of this sequence's logits rows in the last decode
        self._copied: list[np.ndarray] | None = None  # the rows themselves, when other decodes ran since (LOKAL_BATCH=single)

    # The model's vocabulary, sizes and settings, as for the model itself.
    def __getattr__(self, name):
        return getattr(self.model, name)

    def common_prefix(self, tokens: Seq[int]) -> int:
        return common_prefix(self.tokens, tokens)

    def truncate(self, n: int) -> int:
        """Drop everything after the first n cached tokens; returns how many are kept.

        A model that cannot remove part of its cache (recurrent, hybrid) clears the
        sequence entirely: re-evaluating is slower, but never wrong.
        """
        if n >= len(self.tokens):
            return len(self.tokens)
        if self.model.can_rewind and llama_cpp.llama_memory_seq_rm(self.model.memory, self.seq_id, n, -1):
            del self.tokens[n:]
            return n
        self.clear()
        return 0

    def clear(self) -> None:
        llama_cpp.llama_memory_seq_rm(self.model.memory, self.seq_id, -1, -1)
        self.tokens.clear()

    def share(self, donor: "KvSequence", n: int) -> None:
        """Hold exactly the first n tokens of `donor`: the unified cache tags those cells with this sequence too,
        so nothing is computed or copied (each sequence's later tokens stay its own)."""
        self.clear()
        llama_cpp.llama_memory_seq_cp(self.model.memory, donor.seq_id, self.seq_id, 0, n)
        self.tokens.extend(donor.tokens[:n])

    def decode(self, tokens: Seq[int], *, all_logits: bool = False, abort: threading.Event | None = None) -> None:
        """Append `tokens` in one llama_decode call of this sequence alone (len <= n_batch)."""
        if tokens:
            self.model.decode_slices([Slice(self, tokens, all_logits)], abort=abort)

    def decode_all(self, tokens: Seq[int]) -> None:
        """Append any number of tokens, n_batch per llama_decode call; the last token's logits are ready after."""
        for i in range(0, len(tokens), self.model.n_batch):
            self.decode(tokens[i : i + self.model.n_batch])

    def logits(self, i: int = -1) -> np.ndarray:
        """Logits row i of this sequence's part of the last decode (-1: its last); a zero-copy view until the next decode."""
        if self._copied is not None:
            return self._copied[i]
        try:
            row = self._rows[i]
        except IndexError:
            raise DecodeError(f"no logits for output {i} of sequence {self.seq_id}") from None
        ptr = llama_cpp.llama_get_logits_ith(self.model.context.ctx, row)
        if not ptr:
            raise DecodeError(f"no logits for output {i}")
        return np.ctypeslib.as_array(ptr, shape=(self.model.n_vocab,))


def as_sequence(model: "LlamaModel | KvSequence") -> KvSequence:
    """A model stands for its sequence 0."""
    return model.sequences[0] if isinstance(model, LlamaModel) else model


class LlamaModel:
    def __init__(self, settings: LoadSettings, header: GGUFHeader, on_progress: Callable[[float], bool] | None = None):
        self.settings = settings
        self.header = header
        llama_cpp.llama_backend_init()

        model_params = llama_cpp.llama_model_default_params()
        model_params.n_gpu_layers = settings.n_gpu_layers if settings.n_gpu_layers >= 0 else 0x7FFFFFFF
        model_params.split_mode = SPLIT_MODES[settings.split_mode]
        model_params.main_gpu = settings.main_gpu
        if on_progress is not None:
            # The callback object must outlive the load: keep a reference.
            self._progress_cb = llama_cpp.llama_progress_callback(lambda p, _data: bool(on_progress(float(p))))
            model_params.progress_callback = self._progress_cb
        self._model = internals.LlamaModel(path_model=settings.path, params=model_params, verbose=False)

        n_seq = max(1, settings.n_seq)
        ctx_params = llama_cpp.llama_context_default_params()
        ctx_params.n_ctx = settings.n_ctx * n_seq
        ctx_params.n_batch = min(settings.n_batch, settings.n_ctx)
        ctx_params.n_ubatch = ctx_params.n_batch
        # One more sequence id than slots: the scratch sequence the KV store copies part of a sequence through
        # (runtime/kvstore/seq_state.py). It holds no cells of its own: the cache is sized for the slots.
        ctx_params.n_seq_max = n_seq + 1
        # One pool of cells for all sequences: a batch of many sequences is one graph, whatever each one's length.
        ctx_params.kv_unified = True
        ctx_params.n_threads = settings.n_threads
        ctx_params.n_threads_batch = settings.n_threads
        ctx_params.type_k = KV_TYPES[settings.type_k]
        ctx_params.type_v = KV_TYPES[settings.type_v]
        ctx_params.swa_full = settings.swa_full
        # As the load asks; else on for a quantized V cache, which llama.cpp refuses without it; else llama.cpp's auto (on,
        # the CPU included). Off is faster on a CPU (docs/benchmarks/llama_bench_flash_attn.json) but is not the default:
        # without it a sequence's attention sums over every cell up to the highest in use, so where its cells sit (a
        # state restored elsewhere, another reply's beside it) changes the rounding, and a greedy reply after a restore
        # could part from the one the resident cache gives (tests/runtime/kvstore/test_warm_conversations.py fails so).
        self.flash_attn = settings.flash_attn if settings.flash_attn is not None else (True if settings.type_v != "f16" else None)
        if self.flash_attn is not None:
            ctx_params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if self.flash_attn else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self._ctx = internals.LlamaContext(model=self._model, params=ctx_params, verbose=False)
        self.n_batch = ctx_params.n_batch
        self._batch = internals.LlamaBatch(n_tokens=self.n_batch, embd=0, n_seq_max=1, verbose=False)

        self.vocab = self._model.vocab
        self.n_vocab = self._model.n_vocab()
        self.n_seq = n_seq
        self.n_ctx = llama_cpp.llama_n_ctx(self._ctx.ctx) // n_seq  # per sequence
        self.n_ctx_train = int(llama_cpp.llama_model_n_ctx_train(self._model.model))
        self.can_rewind = not (llama_cpp.llama_model_is_recurrent(self._model.model) or llama_cpp.llama_model_is_hybrid(self._model.model))
        self.one_sequence_per_decode = os.environ.get(BATCH_ENV, "").lower() == "single"
        # Told of every timed pass (tokens, seconds, logits rows): the speculative cost model (runtime/speculative/costs.py).
        self.pass_observers: list[Callable[[int, float, int], None]] = []
        self.sequences = [KvSequence(self, i) for i in range(n_seq)]
        self.scratch_seq_id = n_seq
        self._pieces: dict[int, bytes] = {}
        self._special_pieces: dict[int, bytes] = {}
        # Asked of every token a lookup draft would copy, every step: one call into llama.cpp per token otherwise.
        self._ends_generation: dict[int, bool] = {}
        self._piece_buf = ctypes.create_string_buffer(256)
        self._abort_event: threading.Event | None = None
        self._abort_cb = llama_cpp.ggml_abort_callback(lambda _data: bool(self._abort_event is not None and self._abort_event.is_set()))
        # The projector loaded with the model (runtime/vision/projector.py): evaluates pictures' placeholder runs.
        self.projector: "Projector | None" = None

    # ---- identity ----------------------------------------------------
    @property
    def model_pointer(self):
        """llama.cpp's llama_model*, for what loads beside the model (the projector: runtime/vision)."""
        return self._model.model

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

    def piece(self, token: int, special: bool = False) -> bytes:
        """The bytes a token stands for (special tokens render as nothing, unless `special`: then as their text)."""
        if token < 0:
            return positions.piece(token)  # a picture's position (runtime/vision/positions.py)
        cache = self._special_pieces if special else self._pieces
        piece = cache.get(token)
        if piece is None:
            n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece_buf, len(self._piece_buf), 0, special)
            piece = self._piece_buf.raw[: max(n, 0)]
            cache[token] = piece
        return piece

    def is_end_of_generation(self, token: int) -> bool:
        ends = self._ends_generation.get(token)
        if ends is None:
            ends = self._ends_generation[token] = bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))
        return ends

    # ---- sequence 0, for single-sequence callers ------------------------
    @property
    def tokens(self) -> list[int]:
        return self.sequences[0].tokens

    def common_prefix(self, tokens: Seq[int]) -> int:
        return self.sequences[0].common_prefix(tokens)

    def truncate(self, n: int) -> int:
        return self.sequences[0].truncate(n)

    def clear(self) -> None:
        self.sequences[0].clear()

    def decode(self, tokens: Seq[int], *, all_logits: bool = False, abort: threading.Event | None = None) -> None:
        self.sequences[0].decode(tokens, all_logits=all_logits, abort=abort)

    def decode_all(self, tokens: Seq[int]) -> None:
        self.sequences[0].decode_all(tokens)

    def logits(self, i: int = -1) -> np.ndarray:
        return self.sequences[0].logits(i)

    # ---- evaluation --------------------------------------------------
    def decode_slices(self, slices: Seq[Slice], *, abort: threading.Event | None = None) -> None:
        """Append each slice's tokens to its sequence, all in one llama_decode call (at most n_batch tokens in all).

        Logits are kept for each slice's last token, or for all of them with all_logits
        (speculative verification). With `abort`, llama.cpp polls the event between graph
        nodes, so a long batch stops soon after a cancel. If the call fails, no slice's
        tokens stay in the cache.
        """
        slices = [s for s in slices if len(s.tokens)]
        if not slices:
            return
        if len({s.seq.seq_id for s in slices}) != len(slices):
            raise ValueError("a batch may carry one slice per sequence")
        # A picture's positions are embeddings, not token ids: they go in llama_decode calls of their own.
        pictures = [s for s in slices if positions.is_image(s.tokens[0])]
        for s in pictures:
            self._decode_picture(s, abort)
        slices = [s for s in slices if not positions.is_image(s.tokens[0])]
        if not slices:
            return
        alone = len(slices) > 1 and self.one_sequence_per_decode
        for s in slices:
            if s.singly:
                self._decode_singly(s, abort)
            elif alone:
                self._decode([s], abort)
                s.seq._copied = [np.array(s.seq.logits(i)) for i in range(len(s.rows))]
        rest = [s for s in slices if not s.singly and not alone]
        if rest:
            self._decode(rest, abort)

    def _decode_picture(self, s: Slice, abort: threading.Event | None) -> None:
        """A slice that is one picture's placeholder run (or several copies of the same picture), evaluated by the
        projector into the slice's sequence at its position. If it fails, none of its positions stay in the cache."""
        seq = s.seq
        token = s.tokens[0]
        if self.projector is None:
            raise DecodeError("the prompt holds a picture, but no projector is loaded")
        if any(t != token for t in s.tokens):
            raise ValueError("a picture's slice holds one picture's positions only")
        if len(seq.tokens) + len(s.tokens) > self.n_ctx:
            raise DecodeError(f"the context is full ({self.n_ctx} tokens)")
        start = len(seq.tokens)
        if abort is not None:
            self._abort_event = abort
            llama_cpp.llama_set_abort_callback(self._ctx.ctx, self._abort_cb, None)
        try:
            done = 0
            while done < len(s.tokens):
                done += self.projector.decode(self._ctx.ctx, seq.seq_id, start + done, token, self.n_batch)
            if done != len(s.tokens):
                raise DecodeError(f"the picture took {done} positions, its prompt has {len(s.tokens)}")
        except Exception as exc:
            llama_cpp.llama_memory_seq_rm(self.memory, seq.seq_id, start, -1)
            if abort is not None and abort.is_set():
                raise DecodeAborted() from None
            raise exc if isinstance(exc, DecodeError) else DecodeError(str(exc)) from None
        finally:
            if abort is not None:
                llama_cpp.llama_set_abort_callback(self._ctx.ctx, llama_cpp.ggml_abort_callback(0), None)
                self._abort_event = None
        seq.tokens.extend(s.tokens)
        # Embeddings give no logits: a prompt never ends in a picture (the template's text follows it), and
        # the last prompt position is always evaluated again (prepare_prompt), so nothing samples from here.
        s.rows = []
        seq._rows = s.rows
        seq._copied = []

    def _decode_singly(self, s: Slice, abort: threading.Event | None) -> None:
        """A slice's tokens one llama_decode call each; its rows are copied as they come."""
        rows = []
        for token in s.tokens:
            self._decode([Slice(s.seq, (token,))], abort)
            rows.append(np.array(s.seq.logits(-1)))
        s.seq._copied = rows if s.all_logits else rows[-1:]

    def _decode(self, slices: list[Slice], abort: threading.Event | None) -> None:
        n = sum(len(s.tokens) for s in slices)
        if n > self.n_batch:
            raise ValueError(f"batch of {n} tokens exceeds n_batch {self.n_batch}")
        for s in slices:
            if len(s.seq.tokens) + len(s.tokens) > self.n_ctx:
                raise DecodeError(f"the context is full ({self.n_ctx} tokens)")
        batch = self._batch.batch
        batch.n_tokens = n
        i = 0
        for s in slices:
            pos0 = len(s.seq.tokens)
            seq_id = s.seq.seq_id
            s.rows = []
            last = len(s.tokens) - 1
            for j, token in enumerate(s.tokens):
                batch.token[i] = token
                batch.pos[i] = pos0 + j
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = seq_id
                wanted = s.all_logits or j == last
                batch.logits[i] = wanted
                if wanted:
                    s.rows.append(i)
                i += 1
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
            # Whatever part of the batch reached the cache is dropped, so each sequence's `tokens` stays the truth.
            for s in slices:
                if self.can_rewind:
                    llama_cpp.llama_memory_seq_rm(self.memory, s.seq.seq_id, len(s.seq.tokens), -1)
                else:
                    s.seq.clear()
            if rc == 2:
                raise DecodeAborted()
            raise DecodeError(f"llama_decode failed with code {rc}")
        for s in slices:
            s.seq.tokens.extend(s.tokens)
            s.seq._rows = s.rows
            s.seq._copied = None

    # ---- sizes -------------------------------------------------------
    @property
    def kv_bytes_per_token(self) -> int:
        return self.header.kv_bytes_per_token(self.settings.type_k, self.settings.type_v)

    @property
    def context(self):
        return self._ctx

    @property
    def memory(self):
        return self._ctx.memory

    def close(self) -> None:
        if self.projector is not None:
            self.projector.close()
            self.projector = None
        self._batch.close()
        self._ctx.close()
        self._model.close()
        for seq in self.sequences:
            seq.tokens.clear()
