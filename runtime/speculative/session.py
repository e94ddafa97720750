"""Speculation for one loaded target model: its drafters, measured costs, and the decoder for each reply.

Costs and acceptance estimates live as long as the model, so the second reply
starts with what the first one measured. A per-request `speculation` setting
chooses the drafters:

    off     plain decoding
    lookup  prompt lookup only
    draft   the draft model only (needs one, given at model.load)
    both    prompt lookup first, the draft model when lookup has nothing
    auto    both if a draft model is loaded, else lookup

All but `off` adapt the draft length and fall back to plain steps when drafting would not pay.
"""

from __future__ import annotations

import logging
import os

from runtime.engine.generation import Decoder, decode_plain
from runtime.engine.llama_model import LlamaModel
from runtime.protocol import ErrorCode, RpcError
from runtime.speculative.adaptive import Controller
from runtime.speculative.costs import CostModel
from runtime.speculative.decoder import Drafting, SpeculativeDecoder
from runtime.speculative.draft_model import DraftModel
from runtime.speculative.lookup import NgramIndex

log = logging.getLogger("lokal.speculative")

# Test-only knobs, read by the runtime process at model load (never set by the app):
#   LOKAL_SPECULATIVE_VERIFY=single   verify drafts one token per llama_decode call (exactness tests)
#   LOKAL_SPECULATIVE_FIXED_K=N       always draft N tokens: no cost model, no back-off (forces rejections)
VERIFY_ENV = "LOKAL_SPECULATIVE_VERIFY"
FIXED_K_ENV = "LOKAL_SPECULATIVE_FIXED_K"


class Speculation:
    def __init__(self, target: LlamaModel, draft: LlamaModel | None = None, verify_singly: bool | None = None, fixed_k: int | None = None):
        self.target = target
        self.draft = DraftModel(draft) if draft is not None else None
        self.costs = CostModel()
        self.verify_singly = os.environ.get(VERIFY_ENV) == "single" if verify_singly is None else verify_singly
        if fixed_k is None and os.environ.get(FIXED_K_ENV, "").isdigit():
            fixed_k = int(os.environ[FIXED_K_ENV])
        self.fixed_k = fixed_k
        # A draft step is roughly as much slower as the weights are bigger (memory bound), until measured.
        ratio = draft.header.tensor_bytes / max(target.header.tensor_bytes, 1) if draft is not None else 0.5
        self.controller = Controller(self.costs, draft_step_prior=min(1.0, max(0.1, ratio)), fixed_k=fixed_k)
        self.index = NgramIndex()
        self.notice = ""
        if not target.can_rewind:
            self.notice = f"speculative decoding is off: a {target.header.architecture} model cannot rewind part of its cache to the last accepted token"

    def decoder_for(self, mode: str) -> Decoder:
        """The decoder for one reply with this `speculation` setting; INVALID_PARAMS for a mode that cannot run."""
        if mode in ("draft", "both") and self.draft is None:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.speculation: {mode!r} needs a draft model; load one with model.load's draft_path")
        if mode == "auto" and os.environ.get("LOKAL_AUTO_SPECULATION", "on").lower() == "off":
            # Greedy replies that must repeat exactly from run to run (the tests) need plain decoding:
            # which positions speculation verifies in a batch depends on timing, and batched logits differ slightly.
            mode = "off"
        if mode == "off" or self.notice:
            notice = self.notice if mode != "off" else ""

            def plain(model, sampler, sink):
                sink.stats.speculation = "off"
                sink.stats.speculation_notice = notice
                decode_plain(model, sampler, sink)

            return plain
        use_lookup = mode in ("lookup", "both", "auto")
        use_draft = mode in ("draft", "both") or (mode == "auto" and self.draft is not None)
        drafting = Drafting(self.controller, self.index if use_lookup else None, self.draft if use_draft else None)
        return SpeculativeDecoder(drafting, self.costs, mode, self.verify_singly)

    def close(self) -> None:
        if self.draft is not None:
            self.draft.close()
            self.draft = None
