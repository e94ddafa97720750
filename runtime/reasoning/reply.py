"""One reply's reasoning: its text split as it streams, its tokens counted on each side, the time it
thought, and the budget that ends the thinking.

Tokens are counted where their text lands: the markers and harmony's headers count as reasoning, the
blank lines after the closing marker as answer, and while a reply has not yet shown whether it opens a
block (leading whitespace), its tokens wait and go to the side it turns out to be on. So
reasoning_tokens + answer_tokens == completion_tokens at the end.

The budget (llama-server's --reasoning-budget): once the reply has spent it on reasoning, the closing
text (`ReasoningSyntax.closing`) is written in the model's place, token by token (`steer`), and the
model goes on from there with its answer. 0 closes a block the moment it opens.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from runtime.protocol import GenerationStats
from runtime.reasoning.markers import ReasoningSyntax
from runtime.reasoning.splitter import Parts, ReasoningSplitter, State


@dataclass
class ReasoningPlan:
    """How one reply's reasoning is handled, fixed before it starts (the engine makes it from the request)."""

    syntax: ReasoningSyntax
    starts_open: bool = False  # the prompt opened the block
    budget: int | None = None  # thinking tokens allowed; None: unlimited
    # The closing text as tokens (budget only): the engine tokenizes it with the model's vocabulary.
    closing_tokens: list[int] = field(default_factory=list)
    # Tokens whose special text is a marker: read as that text (harmony's markup are control tokens, which render as nothing).
    marker_tokens: frozenset[int] = frozenset()
    # Text the reply already has (continue_reply): read first, so the splitter knows which side it is on; never sent.
    prefix: str = ""


class ReplyReasoning:
    def __init__(self, plan: ReasoningPlan, stats: GenerationStats, started: float):
        self.plan = plan
        self.stats = stats
        self.started = started
        self.splitter = ReasoningSplitter(plan.syntax, plan.starts_open)
        if plan.prefix:
            self.splitter.push(plan.prefix)
        self.reasoning = ""
        self.answer = ""
        self._undecided_tokens = 0
        self._thinking_since: float | None = time.perf_counter() if self.splitter.thought and not self.splitter.in_answer else None
        self._forced: list[int] = []
        self._closed_by_budget = False

    def take(self, text: str) -> Parts:
        """One token's text (after stop strings): what it settled on each side, and its count on one of them."""
        was_answer = self.splitter.in_answer
        parts = self.splitter.push(text)
        now = time.perf_counter()
        if not self.splitter.decided:
            self._undecided_tokens += 1
        elif was_answer or (self.splitter.in_answer and not self.splitter.thought):
            self._count(answer=1 + self._undecided_tokens)
        else:
            self._count(reasoning=1 + self._undecided_tokens)
        if self.splitter.thought and self._thinking_since is None:
            self._thinking_since = now
        if self._thinking_since is not None and not self.stats.thinking_ms and self.splitter.in_answer:
            self.stats.thinking_ms = (now - self._thinking_since) * 1000
        if parts.answer and not self.stats.ttfat_ms:
            self.stats.ttfat_ms = (now - self.started) * 1000
        self._keep(parts)
        return parts

    def take_final(self, text: str) -> Parts:
        """The reply's last text (what stop strings held back) and its end: everything still held is settled."""
        parts = self.splitter.push(text)
        parts += self.splitter.finish()
        now = time.perf_counter()
        if self._undecided_tokens:
            self._count(answer=self._undecided_tokens)
        if self._thinking_since is not None and not self.stats.thinking_ms:
            self.stats.thinking_ms = (now - self._thinking_since) * 1000
        if parts.answer and not self.stats.ttfat_ms:
            self.stats.ttfat_ms = (now - self.started) * 1000
        self._keep(parts)
        return parts

    def steer(self, sampled: int) -> int:
        """The token the reply takes next: the sampled one, or the next of the closing text once the budget is spent."""
        if self._forced:
            return self._forced.pop(0)
        budget = self.plan.budget
        if budget is None or self._closed_by_budget or not self.plan.closing_tokens:
            return sampled
        # Not while the model is writing a marker (say "</think" so far): its grammar has taken that part, and the
        # closing text forced after it would not fit (SamplerError); the next token settles it one way or the other.
        if self.splitter.state is State.REASONING and self.stats.reasoning_tokens >= budget and not self.splitter.closing:
            self._closed_by_budget = True
            self._forced = list(self.plan.closing_tokens)
            return self._forced.pop(0)
        return sampled

    @property
    def forcing(self) -> bool:
        """The closing text is being written in the model's place (its sampler must not judge those tokens)."""
        return bool(self._forced)

    def _count(self, reasoning: int = 0, answer: int = 0) -> None:
        self._undecided_tokens = 0
        self.stats.reasoning_tokens += reasoning
        self.stats.answer_tokens += answer

    def _keep(self, parts: Parts) -> None:
        self.reasoning += parts.reasoning
        self.answer += parts.answer


def marker_tokens(syntax: ReasoningSyntax, tokenize: Callable[[str], list[int]]) -> frozenset[int]:
    """The tokens that stand for a whole marker on their own (read with their special text)."""
    found = set()
    for marker in syntax.markers:
        tokens = tokenize(marker)
        if len(tokens) == 1:
            found.add(tokens[0])
    return frozenset(found)
