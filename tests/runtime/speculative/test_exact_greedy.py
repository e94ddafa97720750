"""Greedy speculative output is byte-identical to plain greedy output when drafts are verified one token at a time.

llama.cpp's CPU kernels give slightly different logits for a token evaluated
alone than inside a batch, so batched verification may legitimately change a
greedy reply. Verifying singly takes that out: every logit then comes from the
same kernels as in plain decoding, and any difference left is a bug in the
algorithm (acceptance, rewind, the end of the reply).
"""

from __future__ import annotations

import json

import pytest

from runtime.speculative.adaptive import TILE
from runtime.speculative.session import Speculation
from runtime.speculative.trace import TRACE_ENV
from spec_helpers import chat_prompt, load, run

pytestmark = pytest.mark.slow

CODE = "def area(w, h):\n    return w * h\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
PROMPTS = [
    f"Rewrite this code, renaming w to width and h to height:\n{CODE}",
    "What is the capital of France? Answer in one sentence.",
    "Write a short story about a lighthouse keeper.",
]


@pytest.fixture(scope="module")
def target(starter_model):
    model = load(starter_model)
    yield model
    model.close()


@pytest.fixture(scope="module")
def draft(starter_model):
    """SmolLM2 as its own draft: same tokenizer, and it agrees with the target often."""
    model = load(starter_model)
    yield model
    model.close()


class Corrupting:
    """A deliberately bad drafter: the draft model's tokens with one replaced, at position round % k.

    Over the rounds every draft position gets rejected in turn (after the positions
    before it were accepted), and with `always_first` every draft is wrong from the start.
    """

    def __init__(self, inner, always_first: bool = False):
        self.inner = inner
        self.always_first = always_first
        self.rounds = 0
        self.corrupted_at: set[int] = set()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def draft(self, history, k, sampling, sampler):
        tokens, proposals = self.inner.draft(history, k, sampling, sampler)
        if tokens:
            at = 0 if self.always_first else self.rounds % len(tokens)
            tokens[at] = (tokens[at] + 1) % self.inner.model.n_vocab
            self.corrupted_at.add(at)
        self.rounds += 1
        return tokens, proposals


def speculative(target, draft, mode: str, k: int = 4, corrupt: Corrupting | None = None):
    speculation = Speculation(target, draft, verify_singly=True, fixed_k=k)
    if corrupt is not None:
        speculation.for_sequence(0).draft = corrupt
    return speculation.steppers_for(mode)


@pytest.mark.parametrize("prompt", PROMPTS, ids=["code-edit", "question", "story"])
def test_lookup_draft_and_both_match_plain(target, draft, prompt):
    tokens = chat_prompt(target, prompt)
    plain = run(target, tokens, max_tokens=24)
    assert plain.completion, "the plain reply is empty: nothing would be compared"
    for mode in ("lookup", "draft", "both"):
        spec = run(target, tokens, speculative(target, draft, mode), max_tokens=24)
        assert spec.completion == plain.completion, mode
        assert spec.text == plain.text and spec.finish_reason == plain.finish_reason, mode
        assert spec.stats.draft_tokens > 0, f"{mode} drafted nothing: the comparison proves nothing"


def test_lookup_drafts_are_accepted_on_a_code_edit(target, draft):
    tokens = chat_prompt(target, PROMPTS[0])
    spec = run(target, tokens, speculative(target, draft, "lookup"), max_tokens=24)
    assert spec.stats.draft_tokens_accepted > 0
    assert spec.stats.tokens_per_target_pass > 1.0


def test_drafts_rejected_at_every_position_still_match_plain(target, draft):
    tokens = chat_prompt(target, PROMPTS[1])
    plain = run(target, tokens, max_tokens=24)
    corrupt = Corrupting(Speculation(target, draft, verify_singly=True, fixed_k=4).draft)
    spec = run(target, tokens, speculative(target, draft, "draft", k=4, corrupt=corrupt), max_tokens=24)
    assert spec.completion == plain.completion
    assert corrupt.corrupted_at == {0, 1, 2, 3}
    assert 0 < spec.stats.draft_tokens_accepted < spec.stats.draft_tokens


def test_drafts_that_are_always_wrong_still_match_plain(target, draft):
    tokens = chat_prompt(target, PROMPTS[2])
    plain = run(target, tokens, max_tokens=24)
    corrupt = Corrupting(Speculation(target, draft, verify_singly=True, fixed_k=4).draft, always_first=True)
    spec = run(target, tokens, speculative(target, draft, "draft", k=3, corrupt=corrupt), max_tokens=24)
    assert spec.completion == plain.completion
    assert spec.stats.draft_tokens_accepted == 0 and spec.stats.draft_tokens > 0
    # Every pass is a rejected draft: one token per target pass, as plain decoding.
    assert spec.stats.tokens_per_target_pass == pytest.approx(1.0)


def test_rows_that_fill_a_pass_to_a_whole_tile_change_nothing(target, tmp_path, monkeypatch):
    # Drafts of 13: with the token they follow, a pass of 14, 2 rows short of a 16-row tile of the CPU kernels.
    trace_file = tmp_path / "trace.jsonl"
    monkeypatch.setenv(TRACE_ENV, str(trace_file))
    tokens = chat_prompt(target, PROMPTS[0])
    plain = run(target, tokens, max_tokens=48)
    plain_cache = list(target.tokens)
    speculation = Speculation(target, None, verify_singly=True, fixed_k=13)
    try:
        spec = run(target, tokens, speculation.steppers_for("lookup"), max_tokens=48)
    finally:
        speculation.close()
    assert (spec.text, spec.completion, spec.finish_reason) == (plain.text, plain.completion, plain.finish_reason)
    assert target.tokens == plain_cache, "a filler row was left in the cache"
    passes = [p for p in map(json.loads, trace_file.read_text().splitlines()) if p["event"] == "pass"]
    filled = [p for p in passes if p["filler"]]
    assert filled, "no pass ended a few rows short of a tile: nothing was filled, so nothing was compared"
    assert all(p["batch_tokens"] % TILE == 0 and p["batch_tokens"] == 1 + p["k"] + p["filler"] for p in filled), filled
    assert sum(p["k"] for p in passes) == spec.stats.draft_tokens, "filler rows were counted as drafted"


@pytest.mark.parametrize("k", [8, 13])
def test_drafts_running_into_the_end_of_the_context(starter_model, draft, k):
    small = load(starter_model, n_ctx=256)  # llama.cpp's smallest context
    try:
        # A sequence the model continues without end, with runs that prompt lookup drafts right up to the last slot.
        tokens = small.tokenize("Counting: " + ", ".join(str(i) for i in range(1, 62)) + ",", add_bos=False)
        assert 200 < len(tokens) < 250, len(tokens)
        plain = run(small, tokens, max_tokens=300)
        plain_cache = list(small.tokens)
        assert small.n_ctx == 256
        assert plain.finish_reason == "length" and len(tokens) + len(plain.completion) == small.n_ctx + 1
        for mode in ("lookup", "both"):
            spec = run(small, tokens, speculative(small, draft, mode, k=k), max_tokens=300)
            assert spec.completion == plain.completion and spec.finish_reason == "length", mode
            assert small.tokens == plain_cache, "the cache is not left as plain decoding leaves it"
            assert spec.stats.draft_tokens > 0
    finally:
        small.close()


def test_drafts_that_cross_a_stop_string(target, draft):
    tokens = chat_prompt(target, PROMPTS[0])
    plain_free = run(target, tokens, max_tokens=24)
    stop = plain_free.text[len(plain_free.text) // 2 :][:4]
    assert stop.strip(), plain_free.text
    plain = run(target, tokens, max_tokens=24, stop=[stop])
    assert plain.finish_reason == "stop" and len(plain.completion) < len(plain_free.completion)
    for mode in ("lookup", "draft", "both"):
        spec = run(target, tokens, speculative(target, draft, mode, k=6), max_tokens=24, stop=[stop])
        assert (spec.text, spec.finish_reason, spec.completion) == (plain.text, plain.finish_reason, plain.completion), mode


def test_prompt_lookup_knows_the_models_end_of_generation_token(target):
    words = target.tokenize("one two three four five six", add_bos=False)
    index = Speculation(target, None, fixed_k=4).for_sequence(0).index
    index.reset(words + [target.eos_token] + words[:3])
    assert index.match(limit=64).continuation == words[3:] + [target.eos_token]


def test_a_reply_that_fills_the_context_goes_on_as_the_same_reply(starter_model, monkeypatch):
    """The cache is rebuilt without the oldest part of the prompt (make_room); the reply then goes on,
    still exact, and its drafter keeps what it learnt: it is the same reply, not another conversation."""
    from runtime.llama.generation import GenerationRequest, generate, plain_stepper
    from runtime.protocol import GenerationStats
    from spec_helpers import GREEDY

    small = load(starter_model, n_ctx=256)
    try:
        tokens = small.tokenize("Counting: " + ", ".join(str(i) for i in range(1, 62)) + ",", add_bos=False)
        assert 200 < len(tokens) < 250, len(tokens)
        kept = tokens[:1] + tokens[120:]  # the "older turns" left out when the reply fills the context

        def reply(make_stepper=plain_stepper):
            small.clear()
            request = GenerationRequest(prompt=list(tokens), max_tokens=80, sampling=GREEDY, refits=True)
            return generate(small, request, GenerationStats(), make_stepper, refit=lambda _committed: (kept, 1))

        plain = reply()
        assert len(plain.completion) > small.n_ctx - len(tokens) and plain.stats.context_dropped_messages == 1, plain.stats
        speculation = Speculation(small, None, verify_singly=True, fixed_k=8)
        controller = speculation.for_sequence(0).controller
        learnt_afresh = []
        original = controller._learn_afresh
        monkeypatch.setattr(controller, "_learn_afresh", lambda: learnt_afresh.append(1) or original())
        spec = reply(speculation.steppers_for("lookup"))
        assert spec.completion == plain.completion and spec.stats.context_dropped_messages == 1
        assert spec.stats.draft_tokens > 0
        assert learnt_afresh == [], "the reply's own drafter started again from the priors when it went on"
    finally:
        small.close()
