"""llama.cpp's sampler chain as the engine drives it, on the starter model's real logits and vocabulary."""

from __future__ import annotations

import ctypes
import json

import llama_cpp
import numpy as np
import pytest

from runtime.llama.llama_model import LlamaModel, LoadSettings
from runtime.llama.sampling import TOKEN_DATA, Sampler, SamplerError, SamplingConfig
from runtime.engine.structured import schema_grammar
from runtime.gguf.reader import read_file_header
from runtime.speculative.acceptance import judge

pytestmark = pytest.mark.slow



def chi2_999(df: int) -> float:
    """Wilson-Hilferty approximation of the chi-square quantile at 1 - 1e-3 (within 2 % for df >= 5)."""
    return df * (1 - 2 / (9 * df) + 3.0902 * (2 / (9 * df)) ** 0.5) ** 3


@pytest.fixture(scope="module")
def model(starter_model):
    settings = LoadSettings(path=str(starter_model), n_ctx=256, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=1)
    llama = LlamaModel(settings, read_file_header(starter_model))
    yield llama
    llama.close()


@pytest.fixture(scope="module")
def row(model):
    """The logits after a prompt that repeats itself, so penalties have something to act on."""
    prompt = model.tokenize("<|im_start|>user\nSay red green blue red green blue red<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)
    model.clear()
    model.decode(prompt)
    return prompt, np.array(model.logits(-1))


def full_vocabulary_chain(config: SamplingConfig, model, history, logits) -> np.ndarray:
    """What llama.cpp's own chain (logit bias, penalties) makes of the whole row: the reference."""
    chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
    if config.logit_bias:
        biases = (llama_cpp.llama_logit_bias * len(config.logit_bias))(*[llama_cpp.llama_logit_bias(t, b) for t, b in config.logit_bias])
        llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_logit_bias(model.n_vocab, len(config.logit_bias), biases))
    llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_penalties(model.n_vocab, config.penalty_last_n, config.repeat_penalty, config.frequency_penalty, config.presence_penalty))
    for token in history:
        llama_cpp.llama_sampler_accept(chain, token)
    cur = np.empty(len(logits), dtype=TOKEN_DATA)
    cur["id"], cur["logit"], cur["p"] = np.arange(len(logits)), logits, 0
    array = llama_cpp.llama_token_data_array(cur.ctypes.data_as(llama_cpp.llama_token_data_p), len(cur), -1, False)
    llama_cpp.llama_sampler_apply(chain, ctypes.byref(array))
    llama_cpp.llama_sampler_free(chain)
    return cur["logit"]


def test_penalties_on_the_tokens_they_name_equal_llama_cpp_over_the_whole_vocabulary(model, row):
    prompt, logits = row
    config = SamplingConfig(temperature=1.0, top_p=1.0, top_k=0, repeat_penalty=1.3, frequency_penalty=0.4, presence_penalty=0.2, penalty_last_n=16, logit_bias=((42, 5.0), (int(np.argmax(logits)), -3.0)))
    reply = [int(t) for t in np.argsort(-logits)[:6]]
    sampler = Sampler(config, model, prompt)
    for token in reply:
        sampler.accept(token)
    ids, probs = sampler.distribution(logits)
    expected = full_vocabulary_chain(config, model, prompt[-16:] + reply, logits)
    expected = np.exp(expected.astype(np.float64) - expected.max())
    expected /= expected.sum()
    assert np.array_equal(ids, np.arange(model.n_vocab))
    assert np.abs(probs - expected).max() < 1e-6
    changed = int(np.sum(np.abs(expected - np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()) > 1e-6))
    assert changed >= 10, "the penalties must actually move some tokens for this to compare anything"


def test_greedy_with_a_repeat_penalty_leaves_the_penalised_argmax(model, row):
    prompt, logits = row
    best = int(np.argmax(logits))
    plain = Sampler(SamplingConfig(temperature=0.0), model, prompt)
    penalised = Sampler(SamplingConfig(temperature=0.0, repeat_penalty=1.0, logit_bias=((best, -100.0),)), model, prompt)
    assert plain.sample(logits) == best
    assert penalised.sample(logits) != best


def test_min_p_keeps_only_tokens_near_the_likeliest(model, row):
    _, logits = row
    ids, probs = Sampler(SamplingConfig(temperature=1.0, top_p=1.0, top_k=0, min_p=0.2), model).distribution(logits)
    full = np.exp(logits.astype(np.float64) - logits.max())
    assert set(ids.tolist()) == set(np.flatnonzero(full >= 0.2).tolist())
    assert probs.sum() == pytest.approx(1.0)


@pytest.fixture(scope="module")
def digits_grammar():
    return 'root ::= [0-9] [0-9]*'


def test_sampling_under_a_grammar_without_truncation_draws_exactly_p_restricted_to_it(model, row, digits_grammar):
    """sample() finds an allowed token by rejection; distribution() computes p over the allowed ones outright. They agree."""
    _, logits = row
    config = SamplingConfig(temperature=1.5, top_p=1.0, top_k=0, seed=3, grammar=digits_grammar)
    sampler = Sampler(config, model)
    ids, probs = sampler.distribution(logits)
    assert all(model.piece(int(t)).decode().isdigit() for t in ids), "the grammar allows digits only"
    keep = np.argsort(-probs)[:9]
    n = 3000
    counts = {int(ids[i]): 0 for i in keep}
    other = 0
    for _ in range(n):
        token = sampler.sample(logits)
        assert model.piece(token).decode().isdigit()
        if token in counts:
            counts[token] += 1
        else:
            other += 1
    observed = [counts[int(ids[i])] for i in keep] + [other]
    expected = [probs[i] * n for i in keep] + [(1 - probs[keep].sum()) * n]
    cells = [(o, e) for o, e in zip(observed, expected) if e >= 5]
    statistic = sum((o - e) ** 2 / e for o, e in cells)
    assert len(cells) >= 5, "too few likely tokens to test anything"
    assert statistic < chi2_999(len(cells) - 1), (observed, expected)


def test_a_draft_token_the_grammar_refuses_is_never_accepted(model, row, digits_grammar):
    _, logits = row
    letter = model.tokenize("x", add_bos=False)[0]
    for config in (SamplingConfig(temperature=1.0, top_k=0, top_p=1.0, seed=1, grammar=digits_grammar), SamplingConfig(temperature=0.0, grammar=digits_grammar)):
        sampler = Sampler(config, model)
        for _ in range(200):
            verdict = judge(sampler, logits, letter, None)
            assert not verdict.accepted
            assert model.piece(verdict.token).decode().isdigit()


def test_accept_refuses_a_token_the_grammar_cannot_take_instead_of_aborting(model, digits_grammar):
    sampler = Sampler(SamplingConfig(grammar=digits_grammar), model)
    with pytest.raises(SamplerError):
        sampler.accept(model.tokenize("x", add_bos=False)[0])
    sampler.accept(model.tokenize("7", add_bos=False)[0])  # and it goes on


def test_a_grammar_that_does_not_parse_is_an_error_not_a_crash(model):
    with pytest.raises(SamplerError, match="does not parse"):
        Sampler(SamplingConfig(grammar="root ::= ["), model)


def test_greedy_json_under_a_schema_grammar_validates(model):
    schema = {"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "green"]}, "n": {"type": "integer"}}, "required": ["colour", "n"]}
    prompt = model.tokenize("<|im_start|>user\nGive me a colour as JSON.<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)
    model.clear()
    model.decode(prompt)
    sampler = Sampler(SamplingConfig(temperature=0.0, grammar=schema_grammar(schema)), model, prompt)
    out = b""
    for _ in range(40):
        token = sampler.sample(model.logits(-1))
        if model.is_end_of_generation(token):
            break
        sampler.accept(token)
        out += model.piece(token)
        model.decode((token,))
    document = json.loads(out)
    assert document["colour"] in ("red", "green") and isinstance(document["n"], int)


@pytest.mark.parametrize("seed", [-1, -(2**70), 2**64 - 1, 2**200])
def test_any_integer_seed_is_taken_into_range_and_repeats(row, seed):
    _, logits = row
    draw = lambda: [Sampler(SamplingConfig(temperature=1.0, top_k=0, top_p=1.0, seed=seed)).sample(logits) for _ in range(3)]
    assert draw() == draw()
    if seed == -1:
        assert draw() == [Sampler(SamplingConfig(temperature=1.0, top_k=0, top_p=1.0, seed=2**64 - 1)).sample(logits) for _ in range(3)]


@pytest.mark.parametrize("top_p", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("flatten", [1.0, 4.0])
def test_top_p_over_the_whole_vocabulary_keeps_what_llama_cpp_keeps(model, row, top_p, flatten):
    """top_k 0: top-p runs on a sorted prefix plus a stand-in for the rest's mass; it must cut where llama.cpp's own top-p over every token cuts.

    Up to rounding: llama.cpp normalises in float32 over the whole vocabulary (relative error ~1e-4 over 49k
    additions), the prefix in float64, so on a flat tail the two cuts may differ by a few tokens of negligible mass.
    """
    logits = (row[1] / flatten).astype(np.float32)
    ids, probs = Sampler(SamplingConfig(temperature=1.0, top_k=0, top_p=top_p), model).distribution(logits)
    cur = np.empty(len(logits), dtype=TOKEN_DATA)
    cur["id"], cur["logit"], cur["p"] = np.arange(len(logits)), logits, 0
    top_p_sampler = llama_cpp.llama_sampler_init_top_p(top_p, 1)
    array = llama_cpp.llama_token_data_array(cur.ctypes.data_as(llama_cpp.llama_token_data_p), len(cur), -1, False)
    llama_cpp.llama_sampler_apply(top_p_sampler, ctypes.byref(array))
    llama_cpp.llama_sampler_free(top_p_sampler)
    ours, theirs = set(ids.tolist()), set(cur["id"][: array.size].tolist())
    full = np.exp(logits.astype(np.float64) - logits.max())
    full /= full.sum()
    assert full[list(ours ^ theirs)].sum() < 1e-3, (len(ours), len(theirs))
    assert full[list(ours)].sum() >= top_p - 1e-3
    assert len(ids) > 1 and probs.sum() == pytest.approx(1.0)
