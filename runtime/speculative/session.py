"""Speculation for one loaded target model: its drafters, measured costs, and the steppers of each reply.

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
from typing import Callable

from runtime.llama.generation import PlainStepper, StepperFactory
from runtime.llama.llama_model import LlamaModel, as_sequence
from runtime.protocol import ErrorCode, RpcError
from runtime.speculative.adaptive import Controller
from runtime.speculative.costs import CostModel, calibrate, calibrate_draft, head_share
from runtime.speculative.decoder import Drafting, SpeculativeSteppers
from runtime.speculative.draft_model import DraftModel
from runtime.speculative.lookup import NgramIndex
from runtime.speculative.trace import trace_from_environment

log = logging.getLogger("lokal.speculative")

# Test-only knobs, read by the runtime process at model load (never set by the app):
#   LOKAL_SPECULATIVE_VERIFY=single   verify drafts one token per llama_decode call (exactness tests)
#   LOKAL_SPECULATIVE_FIXED_K=N       always draft N tokens: no cost model, no back-off (forces rejections)
# and one for benchmarks: LOKAL_SPECULATIVE_TRACE=FILE appends a JSON line per pass (trace.py).
VERIFY_ENV = "LOKAL_SPECULATIVE_VERIFY"
FIXED_K_ENV = "LOKAL_SPECULATIVE_FIXED_K"


class SequenceDrafting:
    """What one sequence's replies learn and keep between turns: its n-gram index and its acceptance estimates."""

    def __init__(self, controller: Controller, draft: DraftModel | None, ends_reply: Callable[[int], bool]):
        self.index = NgramIndex(ends=ends_reply)
        self.controller = controller
        self.draft = draft


class Speculation:
    def __init__(self, target: LlamaModel, draft: LlamaModel | None = None, verify_singly: bool | None = None, fixed_k: int | None = None):
        self.target = target
        self.draft_llama = draft
        self.costs = CostModel(head_share(target))
        target.pass_observers.append(self.costs.observe_pass)  # every pass prices drafts: verifications, batches, prompt chunks
        self.verify_singly = os.environ.get(VERIFY_ENV) == "single" if verify_singly is None else verify_singly
        if fixed_k is None and os.environ.get(FIXED_K_ENV, "").isdigit():
            fixed_k = int(os.environ[FIXED_K_ENV])
        self.fixed_k = fixed_k
        self.trace = trace_from_environment()
        # A draft step is roughly as much slower as the weights are bigger (memory bound), until measured.
        ratio = draft.header.tensor_bytes / max(target.header.tensor_bytes, 1) if draft is not None else 0.5
        self.draft_step_prior = min(1.0, max(0.1, ratio))
        self._sequences: dict[int, SequenceDrafting] = {}
        self.cannot_rewind = "" if target.can_rewind else target.header.architecture
        if not self.cannot_rewind and not self.verify_singly and fixed_k is None:
            calibrate(target.sequences[-1], self.costs)
            if draft is not None:
                calibrate_draft(draft.sequences[-1], self.costs)

    @property
    def draft(self) -> DraftModel | None:
        return self.for_sequence(0).draft

    def for_sequence(self, seq_id: int) -> SequenceDrafting:
        state = self._sequences.get(seq_id)
        if state is None:
            controller = Controller(self.costs, draft_step_prior=self.draft_step_prior, fixed_k=self.fixed_k)
            draft = DraftModel(self.draft_llama.sequences[seq_id]) if self.draft_llama is not None else None
            state = self._sequences[seq_id] = SequenceDrafting(controller, draft, self.target.is_end_of_generation)
        return state

    def steppers_for(self, mode: str) -> StepperFactory:
        """What makes the stepper of one reply with this `speculation` setting; INVALID_PARAMS for a mode that cannot run."""
        if mode in ("draft", "both") and self.draft_llama is None:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.speculation: {mode!r} needs a draft model; load one with model.load's draft_path")
        if mode == "auto" and os.environ.get("LOKAL_AUTO_SPECULATION", "on").lower() == "off":
            # Greedy replies that must repeat exactly from run to run (the tests) need plain decoding:
            # which positions speculation verifies in a batch depends on timing, and batched logits differ slightly.
            mode = "off"
        if mode == "off" or self.cannot_rewind:
            cannot_rewind = self.cannot_rewind if mode != "off" else ""
            return lambda model, sampler, sink: PlainStepper(model, sampler, sink, cannot_rewind)
        use_lookup = mode in ("lookup", "both", "auto")
        use_draft = mode in ("draft", "both") or (mode == "auto" and self.draft_llama is not None)

        def make(model, sampler, sink):
            state = self.for_sequence(as_sequence(model).seq_id)
            drafting = Drafting(state.controller, state.index if use_lookup else None, state.draft if use_draft else None)
            return SpeculativeSteppers(drafting, self.costs, mode, self.verify_singly, self.trace)(model, sampler, sink)

        return make

    def close(self) -> None:
        self._sequences.clear()
        if self.costs.observe_pass in self.target.pass_observers:
            self.target.pass_observers.remove(self.costs.observe_pass)
        if self.draft_llama is not None:
            self.draft_llama.close()
            self.draft_llama = None
