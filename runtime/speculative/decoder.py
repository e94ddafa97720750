"""The speculative decoding step: draft, verify in the target's batch, keep the accepted run, rewind the rest.

State between steps: the sequence's cache holds every accepted token but the
newest one, `pending`, whose logits are not computed yet. A step evaluates
[pending, d1 .. dk] (in the same llama_decode call as the other replies' steps):
row 0 judges d1, row i judges d(i+1), and the last row gives a free extra token
when all k are accepted. The cache is then cut back to the accepted tokens, and
the accepted run plus the target's own next token go to the TokenSink one by
one, which ends the reply exactly where plain decoding would (end-of-generation,
stop string, max_tokens, full context, cancel).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

from runtime.llama.generation import BatchSoFar, StepTiming, TokenSink
from runtime.llama.llama_model import LlamaModel, Slice, as_sequence
from runtime.llama.sampling import Sampler, SamplingConfig
from runtime.protocol import GenerationStats
from runtime.speculative.acceptance import Proposal, judge
from runtime.speculative.adaptive import Controller, expected_remaining, filler_rows
from runtime.speculative.costs import CostModel
from runtime.speculative.draft_model import DraftModel
from runtime.speculative.lookup import LENGTHS, NgramIndex
from runtime.speculative.trace import PassTrace

# The copy's tokens the reply writes after one it replaced by another, that show it substituted it (a rename, a
# re-indented line) rather than inserted or rewrote text there.
SUBSTITUTE_SHOWN = 2


@dataclass
class Draft:
    tokens: list[int]
    proposals: list[Proposal]  # the distribution each token was drawn from; None: deterministic
    match: int | None  # prompt lookup: the length of the suffix match it continues; None: the draft model
    probe: bool = False
    expected: float = 1.0  # tokens this step is expected to yield (the accepted run and the target's own)
    of_reply: bool = False  # a lookup draft that copies the reply's own earlier tokens, not earlier text
    start: int = 0  # a lookup draft: where its continuation starts in the history
    resumes: bool = False  # a lookup draft that resumes a copy where the edit inserted text (replaced.resumption)
    substituted: list[tuple[int, int]] = field(default_factory=list)  # a lookup draft: (offset, token) written for the source's
    carried: bool = False  # a lookup draft whose copy's run goes on across a substitute (Drafting._aligned)


class Drafting:
    """Which drafters a reply may use, and the controller that picks between them and plain steps."""

    def __init__(self, controller: Controller, lookup: NgramIndex | None, draft_model: DraftModel | None):
        self.controller = controller
        self.lookup = lookup
        self.draft_model = draft_model
        self.shadow: _Copy | None = None  # a lookup draft not used this round, scored afterwards
        self.reply_start = 0  # where the reply begins in the history: a match after it copies the reply itself
        # Where in the history the reply's copy stands: after the last token a lookup draft (used or not) got right.
        # A copy broken by an inserted line resumes there, where the suffix after the insertion may occur many times.
        self.copy_at: int | None = None
        # The history's length when the reply stood at copy_at, and how long the copy had run there; None: it has
        # since written something else. The reply's tokens since then go on with the copy if each is the copied token
        # or a substitute for it (replaced.substitute): after a substitute, no suffix of the reply occurs before.
        self.copy_seen: int | None = None
        self.copy_run = 0
        # A token the reply wrote in place of the copy's, not yet known as a substitute: (where, how many of the copy's
        # tokens it wrote after it). It is one once the copy went on for SUBSTITUTE_SHOWN tokens after it.
        self.copy_swap: tuple[int, int] | None = None

    def propose(
        self, history: list[int], room: int, sampling: SamplingConfig, draft_sampler: Sampler | None, batch: BatchSoFar, remaining: int | None = None
    ) -> Draft | None:
        """A draft to verify in this step, or None; `remaining`: the tokens the reply is expected still to produce."""
        self.shadow = None
        copy: _Copy | None = None
        if self.lookup is not None:
            resumption = self.controller.replaced.resumption(self.lookup.tokens)
            if resumption is not None:
                draft = self._resume(*resumption, room, batch)
                if draft is not None:
                    return draft
            limit = min(room, self.controller.k_max_lookup)
            aligned = self._aligned(history)
            match = self.lookup.match(limit, near=self.copy_at)
            # A copy's run is priced as prompt lookup would match it without the substitutes: the longest suffix length within it.
            run = max((n for n in LENGTHS if aligned is not None and n <= aligned[1]), default=0)
            if aligned is not None and (match is None or run >= match.n):
                at = aligned[0]
                continuation = self.lookup.continuation_at(at, limit)
                if continuation:
                    # The suffix's other occurrences say nothing of a copy longer than the suffix (one with substitutes).
                    same = match is not None and match.start == at and match.n == run
                    agreement = match.agreement if match is not None and same else (1.0,) * len(continuation)
                    copy = self._copy(at, run, continuation, agreement, carried=not same)
            elif match is not None:
                copy = self._copy(match.start, match.n, match.continuation, match.agreement)
            if copy is not None:
                plan = self.controller.plan_lookup(copy.match, len(copy.tokens), room, batch, copy.of_reply, copy.held, copy.carried)
                if plan.k > 0:
                    return Draft(
                        copy.tokens[: plan.k], [None] * plan.k, copy.match, expected=plan.expected, of_reply=copy.of_reply, start=copy.start,
                        substituted=_within(copy.substituted, plan.k), carried=copy.carried,
                    )
                self.shadow = copy
        # Both drafters: the draft model drafts when prompt lookup has nothing worth verifying.
        if self.draft_model is not None and (copy is None or self.shadow is not None):
            draft_model = self.draft_model
            plan = self.controller.plan_draft(room, batch, lambda: draft_model.behind(history), remaining)
            if plan.k > 0:
                tokens, proposals = self.draft_model.draft(history, plan.k, sampling, draft_sampler)
                self.controller.costs.observe_draft(*self.draft_model.last_timing)
                self.observe_catch_up()
                if tokens:
                    return Draft(tokens, proposals, None, plan.probe, plan.expected)
            else:
                self.controller.skipped_draft()
        return None

    def _copy(self, start: int, match: int, continuation: list[int], agreement: Sequence[float], carried: bool = False) -> "_Copy":
        """A copy of the history from `start`, after a run of `match` tokens, as the reply is likely to write it, with
        the chance that it holds for m = 1 .. len: as far as the suffix's other occurrences agree, and the reply
        copies rather than inserts or replaces (a copy of the source with the substitutes the reply wrote for it)."""
        assert self.lookup is not None
        replaced = self.controller.replaced
        of_reply = start >= self.reply_start
        substituted: list[tuple[int, int]] = []
        if of_reply:  # the reply's own tokens are written as it writes them already
            tokens, kept = continuation, replaced.kept(continuation)
        else:
            tokens, kept, substituted = replaced.substitute(continuation)
        not_inserted = replaced.not_inserted(self.lookup.tokens, start, match, len(continuation))
        held = [a * c * i for a, c, i in zip(agreement, kept, not_inserted)]
        return _Copy(tokens, start, match, of_reply, held, substituted, carried)

    def _aligned(self, history: Sequence[int]) -> tuple[int, int] | None:
        """Where the reply's copy stands now and how long it has run, if every token since copy_seen went on with it."""
        if self.copy_at is None or self.copy_seen is None:
            return None
        replaced = self.controller.replaced
        at, run, swap = self.copy_at, self.copy_run, self.copy_swap
        for i in range(self.copy_seen, len(history)):
            token, source = history[i], history[at]
            if token == source or (at < self.reply_start and replaced.written_for(source, token)):
                replaced.wrote(source, token)
                if swap is not None:
                    swap = (swap[0], swap[1] + 1)
                    if swap[1] == SUBSTITUTE_SHOWN:
                        replaced.substituted_at(history, swap[0], history[i - SUBSTITUTE_SHOWN])
                        # A substitute written for the first time may be a one-off rewrite of more than that token:
                        # the copy's run is carried across a substitute only from its second time on.
                        run, swap = SUBSTITUTE_SHOWN - 1, None
            elif swap is None and at < self.reply_start and run >= SUBSTITUTE_SHOWN:
                swap = (at, 0)
            else:
                self.copy_seen = self.copy_swap = None
                return None
            at += 1
            run += 1
        self.copy_at, self.copy_seen, self.copy_run, self.copy_swap = at, len(history), run, swap
        # Until the copy has shown the token was a substitute, the reply may as well have inserted text there: the
        # copy is only as long as what the reply wrote after it.
        return at, run if swap is None else swap[1]

    def _resume(self, at: int, run: int, chance: float, room: int, batch: BatchSoFar) -> Draft | None:
        """A lookup draft that resumes, at `at`, a copy that had run `run` tokens when the edit inserted text there."""
        assert self.lookup is not None
        replaced = self.controller.replaced
        continuation = self.lookup.continuation_at(at, min(room, self.controller.k_max_lookup))
        if not continuation:
            return None
        # The first token holds if the inserted text ended here; past it, the copy goes on as any copy of that run.
        past_the_place = [1.0, *replaced.not_inserted(self.lookup.tokens, at + 1, run + 1, len(continuation) - 1)]
        tokens, kept, substituted = replaced.substitute(continuation)
        held = [chance * c * i for c, i in zip(kept, past_the_place)]
        plan = self.controller.plan_lookup(run, len(continuation), room, batch, False, held)
        if plan.k == 0:
            return None
        return Draft(tokens[: plan.k], [None] * plan.k, run, expected=plan.expected, start=at, resumes=True, substituted=_within(substituted, plan.k))

    def sync_draft_model(self, history: list[int], remaining: int) -> None:
        """Read the prompt into the draft model before the first token, where it could pay once caught up."""
        if self.draft_model is not None and self.controller.draft_could_pay(self.draft_model.behind(history), remaining):
            self.draft_model.sync(history)
            self.observe_catch_up()

    def observe_catch_up(self) -> None:
        assert self.draft_model is not None
        if self.draft_model.last_catch_up is not None:
            self.controller.costs.observe_catch_up(*self.draft_model.last_catch_up)
            self.draft_model.last_catch_up = None

    def score_shadow(self, emitted: Sequence[int]) -> None:
        """Prompt lookup's acceptance, learnt for free from a round that did not use it."""
        if self.shadow is None:
            return
        copy = self.shadow
        self.shadow = None
        draft = copy.tokens
        n = min(len(draft), len(emitted))
        agreed = 0
        while agreed < n and draft[agreed] == emitted[agreed]:
            agreed += 1
        drafted = agreed + 1 if agreed < n else agreed
        next_token = emitted[agreed] if agreed < len(emitted) else None
        self.judged(copy.match, copy.start, drafted, agreed, copy.of_reply, substituted=_within(copy.substituted, drafted), next_token=next_token, carried=copy.carried)

    def judged(
        self, match: int, start: int, drafted: int, agreed: int, of_reply: bool, resumes: bool = False, next_token: int | None = None,
        substituted: Sequence[tuple[int, int]] = (), carried: bool = False,
    ) -> None:
        """A lookup draft continuing the history at `start` after a suffix match of `match` tokens: `drafted` tokens
        judged (used or scored as a shadow), the first `agreed` right, then the target's own `next_token` if known.
        `resumes`: a draft from `_resume`, `match` the run its copy had. `substituted`: its (offset, token) written for
        the source's. `carried`: its copy's run went on across a substitute."""
        if not resumes:
            self.controller.observe_lookup(match, drafted, agreed, of_reply, carried)
        elif agreed:  # its first token says whether the inserted text had ended, not how copies run
            self.controller.observe_lookup(match + 1, drafted - 1, agreed - 1, of_reply)
        if self.lookup is not None:
            replaced = self.controller.replaced
            # A draft that went on with the copy the reply stands in leaves it to _aligned(), which counts what the
            # reply wrote there as it does for the target's own tokens; one from elsewhere moves the copy.
            went_on = start == self.copy_at and self.copy_seen == len(self.lookup.tokens)
            whole_reply = match >= len(self.lookup.tokens) - self.reply_start
            replaced.judged(
                self.lookup.tokens, start, match, drafted, agreed, of_reply, resumes, substituted, next_token, counted=went_on, whole_reply=whole_reply,
            )
            if agreed == drafted and next_token is not None:
                replaced.target_wrote(self.lookup.tokens, start, match, agreed, next_token)
            if agreed and not went_on:
                self.copy_at, self.copy_seen, self.copy_run, self.copy_swap = start + agreed, len(self.lookup.tokens) + agreed, match + agreed, None


def _within(substituted: list[tuple[int, int]], k: int) -> list[tuple[int, int]]:
    """The substitutes among a draft's first k tokens."""
    return [(offset, token) for offset, token in substituted if offset < k]


@dataclass
class _Copy:
    """A lookup draft before the controller cuts it: see Drafting._copy."""

    tokens: list[int]
    start: int
    match: int
    of_reply: bool
    held: list[float]
    substituted: list[tuple[int, int]]
    carried: bool = False


class SpeculativeSteppers:
    """A StepperFactory (runtime/llama/generation.py): makes the stepper of one reply."""

    def __init__(self, drafting: Drafting, costs: CostModel, mode: str, verify_singly: bool = False, trace: PassTrace | None = None):
        self.drafting = drafting
        self.costs = costs
        self.mode = mode
        self.trace = trace
        # Tests: evaluate the drafted tokens one llama_decode call at a time, so every logit comes
        # from the same kernels as in plain decoding and outputs can be compared byte for byte.
        self.verify_singly = verify_singly

    def __call__(self, model: LlamaModel, sampler: Sampler, sink: TokenSink) -> "SpeculativeStepper":
        return SpeculativeStepper(self, model, sampler, sink)


class SpeculativeStepper:
    def __init__(self, factory: SpeculativeSteppers, model, sampler: Sampler, sink: TokenSink):
        self.drafting = factory.drafting
        self.costs = factory.costs
        self.verify_singly = factory.verify_singly
        self.trace = factory.trace
        self.seq = as_sequence(model)
        self.sampler = sampler
        self.sink = sink
        sink.stats.speculation = factory.mode
        self.figures = _Figures(sink.stats, self.costs)
        config = sampler.config
        self.draft_sampler = None if sampler.greedy else Sampler(config.for_drafting())
        self.history: list[int] = []
        self.pending = -1
        self.base = 0
        self.draft: Draft | None = None
        self.filler = 0  # rows after the draft's that fill its pass to a whole tile, read by no one
        self._plan_began = self._planned = self._settle_began = 0.0  # the trace's clocks
        # A pass that drafted nothing, as plain decoding's would be, timed from its plan to the next: its start,
        # and the seconds in it that are not a plain token's work (drafting's own, and the pass itself).
        self._plain_like: tuple[float, float] | None = None

    def begin(self) -> bool:
        began = time.perf_counter()
        self.history = list(self.seq.tokens)
        # A reply that filled the context goes on in a rebuilt cache (fewer old turns, then all of the reply
        # so far): it is the same reply, so it keeps what it learnt, and its own tokens still count as reply.
        so_far = len(self.sink.completion)
        self.drafting.reply_start = len(self.history) - so_far
        self.drafting.controller.begin_reply(self.history, resumed=so_far > 0)
        if self.drafting.lookup is not None:
            self.drafting.lookup.reset(self.history)
        if self.drafting.draft_model is not None and any(t < 0 for t in self.history):
            self.drafting.draft_model = None  # it cannot see the pictures in this prompt: prompt lookup only, if on
        # The draft model reads the prompt now, as part of the time to the first token, not mid-reply; not
        # at all where it cannot pay at the costs measured here (it catches up if ever it drafts).
        self.drafting.sync_draft_model(self.history, self._expected_remaining())
        if self.trace is not None:
            drafter = self.drafting.draft_model
            self.trace.write(
                event="begin", seq=self.seq.seq_id, mode=self.figures.stats.speculation, history=len(self.history),
                draft_model=drafter is not None, draft_model_synced=drafter is not None and drafter.synced(self.history),
                seconds=round(time.perf_counter() - began, 6),
                # What the controller prices drafts with: a plain step's seconds and each band's (size, cost per extra token in steps).
                plain_step=self.costs.plain_step, slopes={b: [round(n, 1), round(slope, 3)] for b, (n, slope) in self.costs.slopes.items()},
                draft_step=self.costs.draft_step,
            )
            self._settle_began = time.perf_counter()
        row = self.seq.logits(-1)
        self.pending = self.sampler.sample(row)
        going_on = self.sink.accept(self.pending, row)
        if going_on or self.sink.context_full:  # the token is in the reply (a full context may be made room for)
            self.sampler.accept(self.pending)
        if not going_on:
            return False
        self.history.append(self.pending)
        self._extend_lookup(1)
        return True

    def plan(self, batch: BatchSoFar) -> Slice:
        self._plan_began = time.perf_counter()
        if self._plain_like is not None:
            started, not_plain = self._plain_like
            self.costs.observe_host(self._plan_began - started - not_plain)
            self._plain_like = None
        seq = self.seq
        self.base = len(seq.tokens)  # the cache holds history[:-1]; `pending` is history[-1]
        # Drafts never reach the last slot of the context or past max_tokens: the sink then
        # sees the same cache length as in plain decoding, so a full context ends the reply alike.
        room = min(seq.n_ctx - self.base - 2, self.sink.request.max_tokens - len(self.sink.completion), batch.room - 1)
        if room > 0:
            self.draft = self.drafting.propose(self.history, room, self.sampler.config, self.draft_sampler, batch, self._expected_remaining())
        else:
            self.draft = None
        self._planned = time.perf_counter()
        self.filler = 0
        if self.draft is None:
            return Slice(seq, (self.pending,))
        tokens = (self.pending, *self.draft.tokens)
        # A pass a row or two short of a whole tile, or a few short of 64, costs more than the tile (adaptive.FILL_SHORT,
        # FILLED_PASS): where the draft could not go on to it (the copy or max_tokens ends there), rows no one reads fill it.
        # They follow every row that is judged, so they change none of its logits, and settle() cuts them off the cache.
        filler = filler_rows(batch.tokens + len(tokens))
        self.filler = filler if filler <= min(seq.n_ctx - self.base, batch.room) - len(tokens) else 0
        return Slice(seq, (*tokens, *[tokens[-1]] * self.filler), all_logits=True, singly=self.verify_singly)

    def expected(self) -> float:
        """Tokens this step is expected to yield (for the next reply's plan in the same batch)."""
        return self.draft.expected if self.draft is not None else 1.0

    def settle(self, step: StepTiming) -> bool:
        draft, figures, controller = self.draft, self.figures, self.drafting.controller
        figures.passes += 1
        settle_began = time.perf_counter()
        plain_like = draft is None and step.seconds is not None
        plain_work = 0.0
        if draft is None:
            emitted = [self.sampler.sample(self.seq.logits(-1))]
            self.sampler.accept(emitted[0])
            plain_work = time.perf_counter() - settle_began  # a plain token's own: sampling it (accepting it, below)
        else:
            emitted = self._judge(draft)
            accepted = len(emitted) - 1
            self.seq.truncate(self.base + 1 + accepted)
            if draft.match is None:
                controller.observe_draft(len(draft.tokens), accepted)
                controller.drafted_with_model(draft.probe)
            else:
                self.drafting.judged(
                    draft.match, draft.start, len(draft.tokens), accepted, draft.of_reply, draft.resumes, emitted[-1], draft.substituted, draft.carried
                )
            figures.drafted += len(draft.tokens)
            figures.accepted += accepted
            figures.drafts += 1
            (figures.by_model if draft.match is None else figures.by_lookup).add(len(draft.tokens), accepted)
        self.drafting.score_shadow(emitted)
        if self.trace is not None:
            self._trace_pass(draft, len(emitted) - 1 if draft is not None else 0, step, settle_began)
        accepting = time.perf_counter()
        # emitted[i] was sampled from row i of the verifying pass (a pass without a draft has one row); a view of
        # it is made only for a reply that reads log-probabilities.
        row = self.seq.logits if draft is not None else lambda _i: self.seq.logits(-1)
        reads = self.sink.reads_logprobs
        for i, token in enumerate(emitted):
            if not self.sink.accept(token, row(i) if reads else None):
                self.seq.truncate(self.base + 1 + i)  # as plain decoding leaves it: the last token not evaluated
                figures.emitted += i + 1
                figures.publish()
                return False
            self.history.append(token)
        if plain_like:
            plain_work += time.perf_counter() - accepting
        figures.emitted += len(emitted)
        figures.publish()
        self._extend_lookup(len(emitted))
        if plain_like:
            assert step.seconds is not None
            # Of this pass's time, what plain decoding would not have spent: the draft's search, the pass itself
            # (priced apart, as plain_step), and settle's work that is drafting's (learning, figures, the lookup index).
            settle_s = time.perf_counter() - settle_began
            self._plain_like = (self._plan_began, (self._planned - self._plan_began) + step.seconds + settle_s - plain_work)
        self.pending = emitted[-1]
        return True

    def _expected_remaining(self) -> int:
        so_far = len(self.sink.completion)
        return expected_remaining(so_far, min(self.seq.n_ctx - len(self.history), self.sink.request.max_tokens - so_far))

    def _trace_pass(self, draft: Draft | None, accepted: int, step: StepTiming, settle_began: float) -> None:
        assert self.trace is not None
        self.trace.write(
            event="pass", seq=self.seq.seq_id,
            drafter=None if draft is None else "model" if draft.match is None else "lookup",
            k=len(draft.tokens) if draft is not None else 0, accepted=accepted,
            match=draft.match if draft is not None else None, of_reply=draft.of_reply if draft is not None else None,
            resumes=draft is not None and draft.resumes, substituted=len(draft.substituted) if draft is not None else 0,
            carried=draft is not None and draft.carried,
            expected=round(draft.expected, 3) if draft is not None else 1.0, probe=bool(draft and draft.probe),
            filler=self.filler, batch_tokens=step.tokens, decode_s=None if step.seconds is None else round(step.seconds, 6),
            # The step outside llama_decode: from the last settle's start to this plan's (the rest of that settle,
            # the engine's other work), and this plan (lookup, the draft model's drafting).
            between_s=round(self._plan_began - self._settle_began, 6) if self._settle_began else None,
            plan_s=round(self._planned - self._plan_began, 6),
        )
        self._settle_began = settle_began

    def _extend_lookup(self, n: int) -> None:
        if self.drafting.lookup is not None:
            self.drafting.lookup.extend(self.history[-n:])

    def _judge(self, draft: Draft) -> list[int]:
        """The accepted drafted tokens and then the target's own next token, each accepted by the sampler in turn.

        Row i is judged against the chain's distribution given the tokens accepted before it, so the
        sampler accepts each drafted token only once it is accepted (penalties, DRY, grammar).
        """
        row = self.seq.logits
        emitted: list[int] = []
        for i, (token, proposal) in enumerate(zip(draft.tokens, draft.proposals)):
            verdict = judge(self.sampler, row(i), token, proposal)
            self.sampler.accept(verdict.token)
            emitted.append(verdict.token)
            if not verdict.accepted:
                return emitted
        emitted.append(self.sampler.sample(row(len(draft.tokens))))
        self.sampler.accept(emitted[-1])
        return emitted


class _Counts:
    """One drafter's drafted and accepted tokens this turn."""

    def __init__(self) -> None:
        self.drafted = 0
        self.accepted = 0

    def add(self, drafted: int, accepted: int) -> None:
        self.drafted += drafted
        self.accepted += accepted


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
        self.by_lookup = _Counts()  # the same, per drafter
        self.by_model = _Counts()

    def publish(self) -> None:
        s = self.stats
        s.draft_tokens = self.drafted
        s.draft_tokens_accepted = self.accepted
        s.acceptance_rate = self.accepted / self.drafted if self.drafted else 0.0
        s.mean_accepted_length = self.accepted / self.drafts if self.drafts else 0.0
        s.lookup_draft_tokens, s.lookup_draft_tokens_accepted = self.by_lookup.drafted, self.by_lookup.accepted
        s.model_draft_tokens, s.model_draft_tokens_accepted = self.by_model.drafted, self.by_model.accepted
        s.target_passes = self.passes
        s.tokens_per_target_pass = self.emitted / self.passes if self.passes else 0.0
        plain = self.costs.plain_token
        s.speedup = s.decode_tokens_per_s * plain if plain and s.decode_tokens_per_s else 0.0
