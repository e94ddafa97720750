"""Speculative decoding under a grammar: drafts that do not fit are refused, and every reply validates.

The draft model proposes without the grammar (runtime/llama/sampling.py:
SamplingConfig.for_drafting), so many drafted tokens do not fit; with a fixed draft
length every round drafts. The replies must still be JSON that validates, sampled
and greedy, and the figures must show both accepted and refused drafts.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from runtime.llama.sampling import SamplingConfig
from runtime.engine.structured import schema_grammar
from runtime.speculative.session import Speculation
from spec_helpers import chat_prompt, load, run

pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 16}, "colour": {"enum": ["red", "green", "blue"]}, "legs": {"type": "integer"}},
    "required": ["name", "colour", "legs"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def models(starter_model):
    target, draft = load(starter_model, n_ctx=512), load(starter_model, n_ctx=512)
    yield target, draft
    target.close()
    draft.close()


def test_replies_under_a_schema_validate_with_drafts_refused(models):
    target, draft = models
    grammar = schema_grammar(SCHEMA)
    prompt = chat_prompt(target, "Describe an animal as JSON with name, colour and legs.")
    speculation = Speculation(target, draft, fixed_k=3)
    drafted = accepted = 0
    for seed, temperature in ((1, 0.0), (2, 0.9), (3, 0.9), (4, 1.3)):
        sampling = SamplingConfig(temperature=temperature, top_p=0.95, top_k=40, seed=seed, grammar=grammar)
        outcome = run(target, prompt, speculation.steppers_for("draft"), max_tokens=80, sampling=sampling)
        assert outcome.finish_reason == "stop", outcome.text
        jsonschema.validate(json.loads(outcome.text), SCHEMA)
        drafted += outcome.stats.draft_tokens
        accepted += outcome.stats.draft_tokens_accepted
    assert 0 < accepted < drafted, f"drafts must be both accepted and refused for this to test anything ({accepted}/{drafted})"
