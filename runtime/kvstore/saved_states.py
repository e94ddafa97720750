"""The engine's seam to the KV store: restore before a prompt is prepared, save after a reply is sent.

What a state is valid for (its tag): the model file's identity (size and
hashes of its first and last MiB, so a renamed file still matches and a
replaced one does not), its projector's the same way when one is loaded, the context size, the K and V cache types, swa_full,
flash attention (it changes the V layout) and the llama.cpp version. A state
with any other tag is never a candidate; one whose token ids are not a prefix
of the prompt is used only up to where they agree (the cache is rewound there).

Knobs (environment): LOKAL_KV_STORE=off disables it; LOKAL_KV_RAM_MB (512),
LOKAL_KV_DISK_GB (5); LOKAL_KV_MIN_TOKENS (64): shorter caches are not saved.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any, Sequence

import llama_cpp
import numpy as np
import xxhash

from runtime import paths
from runtime.llama.llama_model import LlamaModel
from runtime.llama.llama_model import KvSequence as Seq
from runtime.llama.token_alignment import align, common_prefix
from runtime.job_slot import PROTOCOL
from runtime.kvstore import seq_state
from runtime.kvstore.store import DEFAULT_DISK_BUDGET, DEFAULT_RAM_BUDGET, StateStore
from runtime.models.identity import file_identity
from runtime.protocol import GenerationStats

log = logging.getLogger("lokal.kvstore")

# Restoring costs a copy of the whole state; below this many tokens gained, prefilling is as quick.
MIN_GAIN_TOKENS = 32
# Save only what a turn added to a conversation's saved chain (store.py); False: a whole state each turn (benchmarks compare).
APPEND = True
# Prefills at least this long measure the model's prefill speed (shorter batches run less efficiently).
MEASURED_PREFILL_TOKENS = 32


def model_fingerprint(path: str) -> str:
    return file_identity(path)  # the same identity keys the window's menu and the per-model load settings


def state_tag(model: LlamaModel) -> dict[str, Any]:
    s = model.settings
    return {
        "model": model_fingerprint(s.path),
        "n_ctx": model.n_ctx,
        "type_k": s.type_k,
        "type_v": s.type_v,
        "swa_full": s.swa_full,
        "flash_attn": model.flash_attn,
        "llama_cpp": llama_cpp.__version__,
        # A picture's positions hold what the projector made of it: another projector's are not these.
        **({"mmproj": model_fingerprint(model.projector.path)} if model.projector is not None else {}),
    }


def store_from_environment() -> StateStore | None:
    if os.environ.get("LOKAL_KV_STORE", "").lower() in ("off", "0", "no", "false"):
        return None
    ram = int(float(os.environ.get("LOKAL_KV_RAM_MB", DEFAULT_RAM_BUDGET / 2**20)) * 2**20)
    disk = int(float(os.environ.get("LOKAL_KV_DISK_GB", DEFAULT_DISK_BUDGET / 2**30)) * 2**30)
    return StateStore(paths.cache_dir() / "kv", ram_budget=ram, disk_budget=disk)


class SavedStates:
    def __init__(self, store: StateStore | None, min_tokens: int | None = None):
        self.store = store
        self.min_tokens = min_tokens if min_tokens is not None else int(os.environ.get("LOKAL_KV_MIN_TOKENS", "64"))
        self._tag: dict[str, Any] | None = None
        self._tag_json = ""
        self._prefill_ms_per_token = 0.0  # measured on the loaded model in this process (0: not yet)

    def attach(self, model: LlamaModel) -> None:
        """A model was loaded: from now on states are saved and restored for its tag."""
        if self.store is None:
            return
        self._tag = state_tag(model)
        self._tag_json = json.dumps(self._tag, sort_keys=True)
        self._prefill_ms_per_token = 0.0

    def detach(self) -> None:
        self._tag = None

    # ---- before the prompt is prepared -------------------------------------
    def _owned(self, owner: str) -> dict[str, Any] | None:
        """The tag of states saved for `owner`: caches of the protocol client and of the API never serve each other."""
        return None if self._tag is None else {**self._tag, "owner": owner}

    def restore(self, model: LlamaModel | Seq, prompt: Sequence[int], stats: GenerationStats, owner: str = PROTOCOL) -> list[int] | None:
        """Swap in the saved state (of this owner) that shares the most with `prompt`, if it beats what the sequence holds.

        Returns the prompt spelled with the restored state's ids where they spell the
        same text (token_alignment.py), or None when nothing was restored.
        """
        tag = self._owned(owner)
        if self.store is None or tag is None:
            return None
        started = time.perf_counter()
        piece = lambda token: model.piece(token, special=True)
        live = common_prefix(model.tokens, align(model.tokens, prompt, piece))
        match = self.store.best_match(tag, np.asarray(prompt, dtype=np.int32), lambda tokens: align(tokens, prompt, piece))
        if match is None or match.n_common < live + MIN_GAIN_TOKENS:
            return None
        entry = match.entry
        if not model.can_rewind and not (match.n_common == entry.tokens.size < len(match.prompt)):
            return None  # a recurrent state cannot be cut back to the shared prefix
        loaded = self.store.load(entry)
        if loaded is None:
            return None
        if not seq_state.copy_in(model, loaded.tokens, loaded.segments):
            log.warning("llama.cpp refused the saved state %s; prefilling instead", entry.key)
            self.store.discard(entry)
            return None
        stats.prompt_tokens_restored = match.n_common
        stats.kv_restore_ms = (time.perf_counter() - started) * 1000
        stats.kv_restore_source = loaded.source
        # After a restart nothing was prefilled yet: the cost measured when the state was saved stands in.
        per_token = self._prefill_ms_per_token or entry.prefill_ms_per_token
        if per_token:
            stats.kv_restore_saved_ms = max(0.0, match.n_common * per_token - stats.kv_restore_ms)
        return match.prompt

    def observe_prefill(self, stats: GenerationStats) -> None:
        """Learn what prefilling costs on this model from a turn that prefilled enough tokens to tell."""
        if stats.prompt_tokens_evaluated >= MEASURED_PREFILL_TOKENS and stats.prefill_tokens_per_s > 0:
            self._prefill_ms_per_token = 1000.0 / stats.prefill_tokens_per_s

    # ---- after the reply was sent ------------------------------------------
    def save(self, model: LlamaModel | Seq, conversation_id: str, owner: str = PROTOCOL) -> str | None:
        """Copy what the turn added to the sequence's cache out and hand it to the store, which writes it in the background.

        This runs on the engine thread between two steps (the scheduler's after-work: llama.cpp's cache
        must not change while it is read), so every other stream waits for it. Only the cells from
        where the sequence parts from the conversation's saved chain are copied: about one turn's KV,
        not the whole conversation's. A whole state is copied when there is no chain to add to
        (the first save, an edit early on, after a clear) or the model's cache cannot be cut
        back (recurrent), for which a part would mean nothing.

        Returns the key it is saved under (`holds` asks about it later), None when it is not saved (too short, no store).
        """
        tag = self._owned(owner)
        if self.store is None or tag is None or len(model.tokens) < self.min_tokens:
            return None
        key = xxhash.xxh3_64_hexdigest(f"{self._tag_json}\0{owner}\0{conversation_id}".encode())
        tokens = np.asarray(model.tokens, dtype=np.int32)
        start = self.store.append_start(key, tag, tokens) if APPEND and model.can_rewind else None
        if start is not None and start == tokens.size:
            return key  # the saved chain already holds exactly this
        if start is not None and self.store.append(key, tag, start, tokens, seq_state.copy_out(model, start), self._prefill_ms_per_token):
            return key
        self.store.put(key, tag, tokens, seq_state.copy_out(model), self._prefill_ms_per_token)
        return key

    def holds(self, model: LlamaModel | Seq, key: str) -> bool:
        """Whether the store could restore the sequence's whole cache, as it is now, from what was saved under `key`."""
        return self.store is not None and self._tag is not None and self.store.holds(key, model.tokens)
