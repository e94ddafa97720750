"""The speculative decoding loop: draft, verify in one target pass, keep the accepted run, rewind the rest.

State between rounds: the target's cache holds every accepted token but the
newest one, `pending`, whose logits are not computed yet. A round evaluates
[pending, d1 .. dk] in one batch: row 0 judges d1, row i judges d(i+1), and the
last row gives a free extra token when all k are accepted. The cache is then cut
back to the accepted tokens, and the accepted run plus the target's own next
token go to the TokenSink one by one, which ends the reply exactly where plain
decoding would (end-of-generation, stop string, max_tokens, full context, cancel).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from runtime.engine.generation import TokenSink
from runtime.engine.llama_model import LlamaModel
from runtime.engine.sampling import Sampler, SamplingConfig
from runtime.speculative.acceptance import Proposal, judge
from runtime.speculative.adaptive import Controller, lookup_key
from runtime.speculative.costs import CostModel
from runtime.speculative.draft_model import DraftModel
from runtime.speculative.lookup import Match, NgramIndex
from runtime.protocol import GenerationStats


@dataclass
class Draft:
    tokens: list[int]
    proposals: list[Proposal]  # the distribution each token was drawn from; None: deterministic
    key: str  # which acceptance estimate it feeds ("lookup1".."lookup16", "draft")
    probe: bool = False


class Drafting:
    """Which drafters a reply may use, and the controller that picks between them and plain steps."""

    def __init__(self, controller: Controller, lookup: NgramIndex | None, draft_model: DraftModel | None):
        self.controller = controller
        self.lookup = lookup
        self.draft_model = draft_model
        self.shadow: tuple[str, list[int]] | None = None  # a lookup draft not used this round, scored afterwards

    def propose(self, history: list[int], room: int, sampling: SamplingConfig, draft_sampler: Sampler | None) -> Draft | None:
        self.shadow = None
        match: Match | None = None
        if self.lookup is not None:
            match = self.lookup.match(min(room, 64))
            if match is not None:
                plan = self.controller.plan_lookup(match.n, len(match.continuation), room)
                if plan.k > 0:
                    return Draft(match.continuation[: plan.k], [None] * plan.k, lookup_key(match.n))
                self.shadow = (lookup_key(match.n), match.continuation)
        # Both drafters: the draft model drafts when prompt lookup has nothing worth verifying.
        if self.draft_model is not None and (match is None or self.shadow is not None):
            plan = self.controller.plan_draft(room)
            if plan.k > 0:
                tokens, proposals = self.draft_model.draft(history, plan.k, sampling, draft_sampler)
                self.controller.costs.observe_draft(*self.draft_model.last_timing)
                if tokens:
                    return Draft(tokens, proposals, "draft", plan.probe)
            else:
                self.controller.skipped_draft()
        return None

    def score_shadow(self, emitted: Sequence[int]) -> None:
        """Prompt lookup's acceptance, learnt for free from a round that did not use it."""
        if self.shadow is None:
            return
        key, draft = self.shadow
        self.shadow = None
        n = min(len(draft), len(emitted))
        agreed = 0
        while agreed < n and draft[agreed] == emitted[agreed]:
            agreed += 1
        self.controller.observe(key, agreed + 1 if agreed < n else agreed, agreed)


class SpeculativeDecoder:
    """A Decoder (runtime/engine/generation.py) for one reply."""

    def __init__(self, drafting: Drafting, costs: CostModel, mode: str, verify_singly: bool = False):
        self.drafting = drafting
        self.costs = costs
        self.mode = mode
        # Tests: evaluate the drafted tokens one llama_decode call at a time, so every logit comes
        # from the same kernels as in plain decoding and outputs can be compared byte for byte.
        self.verify_singly = verify_singly

    def __call__(self, model: LlamaModel, sampler: Sampler, sink: TokenSink) -> None:
        stats = sink.stats
        stats.speculation = self.mode
        figures = _Figures(stats, self.costs)
        draft_sampler = None if sampler.greedy else Sampler(sampler.config.for_drafting())
        history = list(model.tokens)
        if self.drafting.lookup is not None:
            self.drafting.lookup.reset(history)
        if self.drafting.draft_model is not None:
            # The draft model reads the prompt now, as part of the time to the first token, not mid-reply.
            self.drafting.draft_model.sync(history)
        pending = sampler.sample(model.logits(-1))
        if not sink.accept(pending):
            return
        sampler.accept(pending)
        history.append(pending)
        self._extend_lookup(history, 1)
        while True:
            base = len(model.tokens)  # the cache holds history[:-1]; `pending` is history[-1]
            # Drafts never reach the last slot of the context or past max_tokens: the sink then
            # sees the same cache length as in plain decoding, so a full context ends the reply alike.
            room = min(model.n_ctx - base - 2, sink.request.max_tokens - len(sink.completion))
            draft = self.drafting.propose(history, room, sampler.config, draft_sampler) if room > 0 else None
            if draft is None:
                emitted = [self._plain_step(model, sampler, pending)]
                figures.passes += 1
            else:
                emitted = self._verify(model, sampler, pending, draft)
                accepted = len(emitted) - 1
                model.truncate(base + 1 + accepted)
                self.drafting.controller.observe(draft.key, len(draft.tokens), accepted)
                if draft.key == "draft":
                    self.drafting.controller.drafted_with_model(draft.probe)
                figures.passes += 1
                figures.drafted += len(draft.tokens)
                figures.accepted += accepted
                figures.drafts += 1
            self.drafting.score_shadow(emitted)
            for i, token in enumerate(emitted):
                if not sink.accept(token):
                    model.truncate(base + 1 + i)  # as plain decoding leaves it: the last token not evaluated
                    figures.emitted += i + 1
                    figures.publish()
                    return
                history.append(token)
            figures.emitted += len(emitted)
            figures.publish()
            self._extend_lookup(history, len(emitted))
            pending = emitted[-1]

    def _extend_lookup(self, history: list[int], n: int) -> None:
        if self.drafting.lookup is not None:
            self.drafting.lookup.extend(history[-n:])

    def _plain_step(self, model: LlamaModel, sampler: Sampler, pending: int) -> int:
        started = time.perf_counter()
        model.decode((pending,))
        self.costs.observe_target(1, time.perf_counter() - started)
        token = sampler.sample(model.logits(-1))
        sampler.accept(token)
        return token

    def _verify(self, model: LlamaModel, sampler: Sampler, pending: int, draft: Draft) -> list[int]:
        """The accepted drafted tokens and then the target's own next token, each accepted by the sampler in turn.

        Row i is judged against the chain's distribution given the tokens accepted before it, so the
        sampler accepts each drafted token only once it is accepted (penalties, DRY, grammar).
        """
        batch = [pending, *draft.tokens]
        if self.verify_singly:
            rows = []
            for token in batch:
                model.decode((token,))
                rows.append(np.array(model.logits(-1)))
            row = rows.__getitem__
        else:
            started = time.perf_counter()
            model.decode(batch, all_logits=True)
            self.costs.observe_target(len(batch), time.perf_counter() - started)
            row = model.logits
        emitted: list[int] = []
        for i, (token, proposal) in enumerate(zip(draft.tokens, draft.proposals)):
            verdict = judge(sampler, row(i), token, proposal)
            sampler.accept(verdict.token)
            emitted.append(verdict.token)
            if not verdict.accepted:
                return emitted
        emitted.append(sampler.sample(row(len(draft.tokens))))
        sampler.accept(emitted[-1])
        return emitted


class _Figures:
    """The turn's speculation figures, written into GenerationStats as they change (read live by runtime.metrics)."""

    def __init__(self, stats: GenerationStats, costs: CostModel):
        self.stats = stats
        self.costs = costs
        self.passes = 0
        self.emitted = 0
        self.drafted = 0
        self.accepted = 0
        self.drafts = 0

    def publish(self) -> None:
        s = self.stats
        s.draft_tokens = self.drafted
        s.draft_tokens_accepted = self.accepted
        s.acceptance_rate = self.accepted / self.drafted if self.drafted else 0.0
        s.mean_accepted_length = self.accepted / self.drafts if self.drafts else 0.0
        s.target_passes = self.passes
        s.tokens_per_target_pass = self.emitted / self.passes if self.passes else 0.0
        plain = self.costs.plain_step
        s.speedup = s.decode_tokens_per_s * plain if plain and s.decode_tokens_per_s else 0.0
