"""Turns a row of logits into the next token with llama.cpp's own samplers.

The samplers are llama.cpp's (`llama_sampler_*`), so Lokal's settings mean what
they mean in llama-server, LM Studio and Ollama: logit bias, repetition
penalties (repeat, frequency, presence, over the last n tokens), DRY, top-k,
typical-p, top-p, min-p, temperature, and a GBNF grammar. They run on a
candidate array built from the logits row with numpy (no Python loop over the
vocabulary).

Speculative decoding needs the whole distribution p the chain samples from at a
position, not just a token, to accept or reject drafted tokens exactly;
`distribution()` is that p, given the tokens accepted so far. The chain runs in
steps, each cheap on a 152k-token vocabulary and each exact:

    elementwise  logit bias and penalties change each token's logit on its own, and only
                 the tokens they name (biased, or in the penalty window): they run over
                 just those tokens, and the changed logits go back into the row
    DRY          over the whole row (it decides itself which tokens to penalise)
    truncate     top-k, typical-p, top-p, min-p keep a subset (llama.cpp's order)
    grammar      checks only the tokens truncation kept, a few dozen normally; when none
                 of them fits, the grammar goes first over the whole vocabulary and
                 truncation runs again on what fits

Then temperature scales the survivors' logits and a softmax gives p. Without any
truncation, sample() draws from p and checks the one token against the grammar,
drawing again without it if refused: the first allowed token is distributed exactly
as p restricted to the grammar, and the whole vocabulary is checked only for
distribution() or after many refusals. Every step is a function of the logits and
the accepted prefix, so sampling from p and judging drafts against p
(runtime/speculative/acceptance.py) agree exactly. Penalties, DRY and the grammar
see a token only through accept(), which decoders call for accepted tokens only;
drafts the grammar rejects have p = 0 and are never accepted.
"""

from __future__ import annotations

import ctypes
import weakref
from collections import deque
from dataclasses import dataclass, replace
from typing import Protocol, Sequence

import numpy as np

import llama_cpp

# llama_token_data, as numpy sees it: the candidate array is filled and read without a Python loop.
TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)
assert TOKEN_DATA.itemsize == ctypes.sizeof(llama_cpp.llama_token_data)

SEED_RANGE = 1 << 64  # any integer seed is taken modulo this (llama.cpp clients send -1, or huge ones)
GRAMMAR_CHUNK = 64  # greedy with a grammar: the best tokens checked at once before the whole vocabulary
REJECTION_TRIES = 16  # sampling with a grammar and no truncation: draws the grammar may refuse before computing p outright
CHOOSE_BLOCK = 4096
TOP_P_GAPS = (4.0, 8.0, 12.0, 16.0, 24.0)  # logit distances below the best token tried for top-p's prefix
TOP_P_MARGIN = 1e-4  # the prefix must hold clearly more than p: float rounding never moves the cut past it
TOP_P_PREFIX_MAX = 16384  # choose(): the cumulative sum runs over blocks of this many probabilities
DRY_SEQUENCE_BREAKERS = ("\n", ":", '"', "*")  # llama.cpp's defaults


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
# Settings llama.cpp takes as int32 (ctypes truncates anything wider without a word).
INT32_SETTINGS = ("top_k", "penalty_last_n", "dry_allowed_length", "dry_penalty_last_n")


class SamplerError(ValueError):
    """A setting llama.cpp cannot use (a grammar that does not parse)."""


class Vocabulary(Protocol):
    """What grammar and DRY need of a model: llama.cpp's vocab pointer and its size (runtime/llama/llama_model.py)."""

    vocab: object
    n_vocab: int


@dataclass(frozen=True)
class SamplingConfig:
    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40  # 0: the whole vocabulary
    seed: int | None = None
    min_p: float = 0.0
    typical_p: float = 1.0
    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    penalty_last_n: int = 64  # how many recent tokens (prompt included) the penalties look at
    dry_multiplier: float = 0.0  # 0: DRY off
    dry_base: float = 1.75
    dry_allowed_length: int = 2
    dry_penalty_last_n: int = 64
    dry_sequence_breakers: tuple[str, ...] = DRY_SEQUENCE_BREAKERS
    logit_bias: tuple[tuple[int, float], ...] = ()  # (token id, bias added to its logit)
    grammar: str | None = None  # GBNF, root rule "root"

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0 or self.top_k == 1

    @property
    def penalized(self) -> bool:
        return self.penalty_last_n != 0 and (self.repeat_penalty != 1.0 or self.frequency_penalty != 0.0 or self.presence_penalty != 0.0)

    @property
    def dry(self) -> bool:
        return self.dry_multiplier != 0.0 and self.dry_base >= 1.0 and self.dry_penalty_last_n != 0

    def for_drafting(self) -> "SamplingConfig":
        """The settings a draft model proposes with: the stateless part.

        Any proposal keeps speculative sampling exact; penalties, DRY and the grammar would need
        their state rolled back after every rejected draft, so the draft model goes without them.
        """
        seed = None if self.seed is None else self.seed + 1
        return replace(self, seed=seed, repeat_penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0, dry_multiplier=0.0, grammar=None)


def _softmax(scores: np.ndarray, temperature: float) -> np.ndarray:
    # float32 over the whole vocabulary (exp of 152k floats: 0.13 ms instead of 0.26), float64 over a cut.
    dtype: type[np.floating] = np.float32 if len(scores) > CHOOSE_BLOCK else np.float64
    x = scores.astype(dtype) * dtype(1.0 / temperature)
    x -= x.max()
    np.exp(x, out=x)
    x /= x.sum(dtype=np.float64)
    return x


def _chain(parts: list) -> ctypes.c_void_p | None:
    if not parts:
        return None
    params = llama_cpp.llama_sampler_chain_default_params()
    params.no_perf = True
    chain = llama_cpp.llama_sampler_chain_init(params)
    for part in parts:
        llama_cpp.llama_sampler_chain_add(chain, part)  # the chain owns it now
    return chain


def _free(*samplers) -> None:
    for sampler in samplers:
        if sampler:
            llama_cpp.llama_sampler_free(sampler)


class Sampler:
    """The sampling state of one reply (one sequence): sample, distribution, accept.

    Interface for decoders:
        sample(logits) -> token          a token drawn from distribution(logits)
        distribution(logits) -> (ids, probs)   p at this position given the accepted prefix
        accept(token)                    advance penalties, DRY and grammar: ACCEPTED tokens only
        greedy                           p is one-hot (temperature 0 or top_k 1)
        choose(ids, probs), uniform()    draws from this sampler's seeded generator
    `history` (the prompt) is fed to the penalties and DRY as llama-server does, never to the grammar.
    """

    def __init__(self, config: SamplingConfig, vocabulary: Vocabulary | None = None, history: Sequence[int] = ()):
        for name in INT32_SETTINGS:
            if not INT32_MIN <= getattr(config, name) <= INT32_MAX:
                raise SamplerError(f"{name}: {getattr(config, name)} does not fit llama.cpp's 32-bit setting")
        self.config = config
        self.rng = np.random.default_rng(None if config.seed is None else int(config.seed) % SEED_RANGE)
        n_vocab = vocabulary.n_vocab if vocabulary is not None else 0
        # Logit bias and penalties change each token's logit on its own, and only the tokens they name
        # (the biased ones, those in the penalty window): they run over just those, not the whole vocabulary.
        self._elementwise = _chain(self._elementwise_parts(config, n_vocab))
        self._dry = self._dry_sampler(config, vocabulary)
        self._truncate = None if config.greedy else _chain(self._truncators(config))
        # top-p over the whole vocabulary: it runs on its own first, on a sorted prefix (_top_p_prefix).
        self._top_p_first = not config.greedy and config.top_k <= 0 and config.typical_p >= 1.0 and config.top_p < 1.0 and config.grammar is None
        self._top_p = llama_cpp.llama_sampler_init_top_p(config.top_p, 1) if self._top_p_first else None
        self._after_top_p = _chain(self._truncators(replace(config, top_p=1.0))) if self._top_p_first else None
        self._grammar = None
        if config.grammar is not None:
            if vocabulary is None:
                raise SamplerError("a grammar needs the model's vocabulary")
            self._grammar = llama_cpp.llama_sampler_init_grammar(vocabulary.vocab, config.grammar.encode("utf-8"), b"root")
            if not self._grammar:
                _free(self._elementwise, self._dry, self._truncate)
                raise SamplerError("the grammar does not parse (llama.cpp's log on stderr says where)")
        self._finalizer = weakref.finalize(self, _free, self._elementwise, self._dry, self._truncate, self._grammar, self._top_p, self._after_top_p)
        self._biased = np.array(sorted({int(t) for t, _ in config.logit_bias}), dtype=np.int32)
        # The penalty sampler's window, mirrored: which tokens it can touch.
        self._window: deque[int] = deque(maxlen=max(config.penalty_last_n, 0) if config.penalized else 0)
        self._size_for(n_vocab)
        self._one = np.empty(1, dtype=TOKEN_DATA)
        self._array = llama_cpp.llama_token_data_array()
        tail = max(config.penalty_last_n if config.penalized else 0, config.dry_penalty_last_n if config.dry else 0)
        if tail and history:
            for token in history[max(len(history) - tail, 0) :]:
                if token >= 0:  # a picture's positions (runtime/vision/positions.py) are no token to penalize
                    self._accept_history(int(token))

    @staticmethod
    def _elementwise_parts(config: SamplingConfig, n_vocab: int) -> list:
        parts = []
        if config.logit_bias:
            biases = (llama_cpp.llama_logit_bias * len(config.logit_bias))(*[llama_cpp.llama_logit_bias(int(t), float(b)) for t, b in config.logit_bias])
            parts.append(llama_cpp.llama_sampler_init_logit_bias(n_vocab, len(config.logit_bias), biases))
        if config.penalized:
            parts.append(llama_cpp.llama_sampler_init_penalties(n_vocab, config.penalty_last_n, config.repeat_penalty, config.frequency_penalty, config.presence_penalty))
        return parts

    @staticmethod
    def _dry_sampler(config: SamplingConfig, vocabulary: Vocabulary | None):
        if not config.dry:
            return None
        if vocabulary is None:
            raise SamplerError("DRY needs the model's vocabulary")
        breakers = [b.encode("utf-8") for b in config.dry_sequence_breakers]
        array = (ctypes.c_char_p * len(breakers))(*breakers)
        return llama_cpp.llama_sampler_init_dry(vocabulary.vocab, config.dry_multiplier, config.dry_base, config.dry_allowed_length, config.dry_penalty_last_n, array, len(breakers))

    @staticmethod
    def _truncators(config: SamplingConfig) -> list:
        # llama.cpp's default order (common/common.h): top_k, typical_p, top_p, min_p; temperature after them.
        parts = []
        if config.top_k > 0:
            parts.append(llama_cpp.llama_sampler_init_top_k(config.top_k))
        if config.typical_p < 1.0:
            parts.append(llama_cpp.llama_sampler_init_typical(config.typical_p, 1))
        if config.top_p < 1.0:
            parts.append(llama_cpp.llama_sampler_init_top_p(config.top_p, 1))
        if config.min_p > 0.0:
            parts.append(llama_cpp.llama_sampler_init_min_p(config.min_p, 1))
        return parts

    def _fit(self, n_vocab: int) -> None:
        if n_vocab != len(self._buf):  # a sampler built without a model learns the vocabulary size from the logits
            self._size_for(n_vocab)

    def _size_for(self, n_vocab: int) -> None:
        self._ids = np.arange(n_vocab, dtype=np.int32)
        self._all_ids = self._ids.copy()  # handed out by distribution(): callers get a read-only one
        self._all_ids.flags.writeable = False
        self._buf = np.empty(n_vocab, dtype=TOKEN_DATA)

    @property
    def greedy(self) -> bool:
        return self.config.greedy

    def close(self) -> None:
        self._finalizer()

    # ---- the distribution ------------------------------------------------
    def distribution(self, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(token ids, probabilities) the chain samples from at this position."""
        if self.config.greedy:
            return np.array([self._best(logits)]), np.array([1.0])
        row = self._adjusted(logits)
        if self._truncate is None and not self._grammar:
            # Nothing is cut: the whole vocabulary, in id order (the adjusters change logits, never the order).
            return self._all_ids, _softmax(row, self.config.temperature)
        survivors = self._survivors(row)
        return survivors["id"].astype(np.int64), _softmax(survivors["logit"], self.config.temperature)

    def sample(self, logits: np.ndarray) -> int:
        if self.config.greedy:
            return self._best(logits)
        if self._grammar and self._truncate is None:
            return self._sample_by_rejection(logits)
        ids, probs = self.distribution(logits)
        return int(ids[0]) if len(ids) == 1 else self.choose(ids, probs)

    def choose(self, ids: np.ndarray, probs: np.ndarray) -> int:
        """A draw from (ids, probs) (probs need not sum to 1) by the inverse of the cumulative distribution.

        A cumulative sum over the whole vocabulary is a sequential pass (~1 ms for 152k tokens):
        over block sums first, then inside the one block the draw falls in.
        """
        n = len(probs)
        offset, base = 0, 0.0
        if n <= CHOOSE_BLOCK:
            target = self.rng.random() * float(np.sum(probs, dtype=np.float64))
            block = probs
        else:
            starts = np.arange(0, n, CHOOSE_BLOCK)
            blocks = np.cumsum(np.add.reduceat(probs, starts, dtype=np.float64))
            target = self.rng.random() * blocks[-1]
            b = min(int(np.searchsorted(blocks, target, side="right")), len(blocks) - 1)
            offset, base = int(starts[b]), (float(blocks[b - 1]) if b else 0.0)
            block = probs[offset : offset + CHOOSE_BLOCK]
        cumulative = np.cumsum(block, dtype=np.float64) + base
        i = int(np.searchsorted(cumulative, target, side="right"))
        # A draw that rounding puts past the end, or onto a zero: the last token with any probability.
        i = min(i, len(block) - 1)
        while i > 0 and block[i] <= 0:
            i -= 1
        return int(ids[offset + i])

    def uniform(self) -> float:
        return float(self.rng.random())

    def accept(self, token: int) -> None:
        """Advance the stateful samplers by one token that is now part of the reply."""
        if self._grammar:
            # llama.cpp aborts the process on a token its grammar cannot take: refuse it here instead.
            if not self._fits_grammar(token):
                raise SamplerError(f"token {token} does not fit the grammar here")
            llama_cpp.llama_sampler_accept(self._grammar, token)
        self._accept_history(token)

    def _accept_history(self, token: int) -> None:
        if self._elementwise:
            llama_cpp.llama_sampler_accept(self._elementwise, token)
            if self._window.maxlen:
                self._window.append(token)
        if self._dry:
            llama_cpp.llama_sampler_accept(self._dry, token)

    # ---- the steps -------------------------------------------------------
    def _adjusted(self, logits: np.ndarray) -> np.ndarray:
        """The logits row after logit bias, penalties and DRY (float32, in id order)."""
        self._fit(len(logits))
        row = logits
        if self._elementwise:
            touched = np.union1d(self._biased, np.fromiter(self._window, dtype=np.int32, count=len(self._window)))
            if len(touched):
                small = np.empty(len(touched), dtype=TOKEN_DATA)
                small["id"], small["logit"] = touched, logits[touched]
                self._apply(self._elementwise, small)
                row = np.array(logits, dtype=np.float32)
                row[small["id"]] = small["logit"]
        if self._dry:
            candidates = self._candidates(row)
            self._apply(self._dry, candidates)
            row = candidates["logit"]
        return row

    def _best(self, logits: np.ndarray) -> int:
        row = self._adjusted(logits)
        best = int(np.argmax(row))
        if not self._grammar or self._fits_grammar(best):
            return best
        # The best tokens first, a few dozen at a time: the best one the grammar allows is usually among them.
        order = np.argsort(-row, kind="stable") if len(row) <= GRAMMAR_CHUNK else None
        top = order[:GRAMMAR_CHUNK] if order is not None else np.argpartition(-row, GRAMMAR_CHUNK)[:GRAMMAR_CHUNK]
        chunk = np.empty(len(top), dtype=TOKEN_DATA)
        chunk["id"], chunk["logit"] = top, row[top]
        allowed = self._apply_grammar(chunk)
        if len(allowed):
            return int(allowed["id"][np.argmax(allowed["logit"])])
        allowed = self._apply_grammar(self._candidates(row))
        if not len(allowed):
            raise SamplerError("the grammar allows no token here")
        return int(allowed["id"][np.argmax(allowed["logit"])])

    def _sample_by_rejection(self, logits: np.ndarray) -> int:
        """A draw from p restricted to what the grammar allows, without checking the whole vocabulary.

        Draw from p; a token the grammar refuses is taken out and the draw repeated: the first allowed
        token is distributed exactly as p restricted to the allowed ones. After a few refusals the
        allowed set is computed outright.
        """
        probs = _softmax(self._adjusted(logits), self.config.temperature)
        for _ in range(REJECTION_TRIES):
            token = self.choose(self._all_ids, probs)
            if probs[token] <= 0:
                break
            if self._fits_grammar(token):
                return token
            probs[token] = 0.0
        ids, probs = self.distribution(logits)
        return self.choose(ids, probs)

    def _survivors(self, row: np.ndarray) -> np.ndarray:
        candidates = self._top_p_prefix(row) if self._top_p_first else None
        if candidates is not None:
            return self._apply(self._after_top_p, candidates)
        candidates = self._candidates(row)
        if self._grammar:
            kept = self._apply_grammar(self._apply(self._truncate, candidates))
            if len(kept):
                return kept
            # Nothing truncation kept fits: the grammar goes first, over the whole vocabulary.
            candidates = self._apply_grammar(self._candidates(row))
            if not len(candidates):
                raise SamplerError("the grammar allows no token here")
        return self._apply(self._truncate, candidates)

    def _top_p_prefix(self, row: np.ndarray) -> np.ndarray | None:
        """The candidates top-p needs, for top-p over the whole vocabulary (top_k 0), or None.

        llama.cpp's top-p sorts the whole vocabulary when its first 256 tokens hold less than p
        (5-10 ms for 152k tokens). The cut falls among the tokens whose logits are above a
        threshold whose tokens hold more than p; so those go first, sorted (llama.cpp trusts
        `sorted`), followed by one stand-in candidate carrying the rest of the mass, so the
        softmax top-p computes is the whole vocabulary's. The stand-in is never kept.
        """
        top = float(row.max())
        weights = np.exp(row - np.float32(top))
        total = float(weights.sum(dtype=np.float64))
        for gap in TOP_P_GAPS:
            chosen = np.flatnonzero(row >= top - gap)
            kept = float(weights[chosen].sum(dtype=np.float64))
            if kept / total > self.config.top_p + TOP_P_MARGIN:
                break
        else:
            return None
        if len(chosen) > TOP_P_PREFIX_MAX:
            return None
        chosen = chosen[np.argsort(-row[chosen], kind="stable")]
        prefix = self._buf[: len(chosen) + 1]
        prefix["id"][:-1], prefix["logit"][:-1] = chosen, row[chosen]
        prefix["id"][-1], prefix["logit"][-1] = chosen[0], top + np.log(max(total - kept, 1e-30))
        array = self._array
        array.data = prefix.ctypes.data_as(llama_cpp.llama_token_data_p)  # type: ignore[assignment]  # POINTER field, see _apply
        array.size, array.selected, array.sorted = len(prefix), -1, True
        llama_cpp.llama_sampler_apply(self._top_p, ctypes.byref(array))
        if array.size >= len(prefix):  # the stand-in would be kept (rounding at the edge): the whole vocabulary after all
            return None
        return prefix[: array.size]

    def _candidates(self, row: np.ndarray) -> np.ndarray:
        self._fit(len(row))
        self._buf["id"] = self._ids
        self._buf["logit"] = row
        return self._buf

    def _apply(self, sampler, candidates: np.ndarray) -> np.ndarray:
        """Run a llama.cpp sampler over `candidates` (a contiguous array, in place); the rows it kept."""
        if not sampler or len(candidates) == 0:
            return candidates
        array = self._array
        # llama_cpp annotates `data` as an array, but the field is a POINTER(llama_token_data), as in llama.h.
        array.data = candidates.ctypes.data_as(llama_cpp.llama_token_data_p)  # type: ignore[assignment]
        array.size = len(candidates)
        array.selected = -1
        array.sorted = False
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))
        # The samplers move the rows they keep to the front; none swaps the data pointer.
        assert ctypes.addressof(array.data.contents) == candidates.ctypes.data  # type: ignore[attr-defined]  # a POINTER, as above
        return candidates[: array.size]

    def _apply_grammar(self, candidates: np.ndarray) -> np.ndarray:
        """The candidates the grammar allows here (the grammar marks the others with -inf), moved to the front."""
        self._apply(self._grammar, candidates)
        allowed = candidates[np.isfinite(candidates["logit"])]  # a copy
        kept = candidates[: len(allowed)]
        kept[:] = allowed
        return kept

    def _fits_grammar(self, token: int) -> bool:
        one = self._one
        one["id"], one["logit"] = token, 0.0
        self._apply(self._grammar, one)
        return bool(np.isfinite(one["logit"][0]))
