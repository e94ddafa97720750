"""The draft/target tokenizer check on real and made-up GGUF headers, and the n-gram index against a linear scan."""

from __future__ import annotations

import random

import pytest

from gguf_files import write_draft_pair, write_llama
from runtime.gguf.reader import GGUFHeader, read_file_header
from runtime.speculative.compat import IncompatibleDraft, check_compatible
from runtime.speculative.lookup import NgramIndex


def header(**metadata) -> GGUFHeader:
    base = {"general.architecture": "llama", "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": ["a", "b", "c", "d"], "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2}
    base.update(metadata)
    return GGUFHeader(version=3, metadata={k: v for k, v in base.items() if v is not None}, tensors=[], header_size=0)


def test_same_tokenizer_is_compatible():
    check_compatible(header(), header())
    check_compatible(header(), header(**{"tokenizer.ggml.tokens": ["a", "b", "c", "d", "pad"]}))  # a few extra rows are fine


@pytest.mark.parametrize(
    "draft, reason",
    [
        (header(**{"tokenizer.ggml.model": "llama"}), "tokenizers differ"),
        (header(**{"tokenizer.ggml.eos_token_id": 3}), "end-of-text tokens differ"),
        (header(**{"tokenizer.ggml.bos_token_id": None}), "beginning-of-text tokens differ"),
        (header(**{"tokenizer.ggml.tokens": ["a", "b", "x", "d"]}), "token 2 is 'c' in the target but 'x' in the draft"),
        (header(**{"tokenizer.ggml.tokens": ["a"] * 400}), "differ in size"),
        (header(**{"general.architecture": "mamba"}), "cannot rewind"),
    ],
)
def test_incompatible_drafts_are_refused_with_the_reason(draft, reason):
    with pytest.raises(IncompatibleDraft, match=reason):
        check_compatible(header(), draft)


TOKENIZER_KEYS = ("tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.add_bos_token")


def test_a_real_models_header_against_drafts_with_its_tokenizer_and_with_another(starter_model, tmp_path):
    """The starter model's real header (a 49,152-token vocabulary) against a smaller model written with
    the same tokenizer (compatible) and against a model of another vocabulary (refused)."""
    starter = read_file_header(starter_model)
    same = write_llama(tmp_path / "same-q4_k_m.gguf", name="Same tokenizer", block_count=4, embedding=256,
                       tokenizer={k: starter.metadata[k] for k in TOKENIZER_KEYS if k in starter.metadata})
    check_compatible(starter, read_file_header(same))
    _target, other = write_draft_pair(tmp_path / "pair")
    with pytest.raises(IncompatibleDraft, match="differ in size"):
        check_compatible(starter, read_file_header(other))


def linear_scan(tokens: list[int], limit: int, lengths: tuple[int, ...]):
    """The reference: the longest suffix (of the given lengths) seen before, its most recent earlier occurrence."""
    for n in sorted((n for n in lengths if n < len(tokens)), reverse=True):
        suffix = tokens[-n:]
        for end in range(len(tokens) - 1, n - 1, -1):
            if tokens[end - n : end] == suffix:
                return n, tokens[end : end + limit]
    return None


def test_index_agrees_with_a_linear_scan_as_the_history_grows():
    rng = random.Random(7)
    tokens = [rng.randrange(6) for _ in range(300)]  # a small alphabet: many repeats of every length
    lengths = (1, 2, 3, 5, 8)  # sparse, as the default lengths are
    index = NgramIndex(lengths)
    index.reset(tokens[:10])
    for i in range(10, len(tokens)):
        index.extend([tokens[i]])
        match = index.match(limit=7)
        expected = linear_scan(tokens[: i + 1], 7, lengths)
        assert (match.n, match.continuation) == expected if expected else match is None


def test_index_finds_a_copied_run_and_resets_when_the_history_changes():
    text = [10, 11, 12, 13, 14, 15, 16, 99, 10, 11, 12]
    index = NgramIndex()
    index.reset(text)
    match = index.match(limit=4)
    assert match.n == 3 and match.continuation == [13, 14, 15, 16]
    index.reset(text + [13])  # grew: extended, not rebuilt
    assert index.match(limit=2).continuation == [14, 15]
    index.reset([1, 2, 3, 1])  # an edit earlier in the conversation: rebuilt
    assert index.match(limit=5).continuation == [2, 3, 1]
    assert NgramIndex().match(limit=3) is None


def test_a_continuation_stops_after_the_token_that_ends_a_reply():
    end = 99  # say, <|im_end|>: after it come the next message's template tokens, never part of this reply
    history = [10, 11, 12, 13, end, 7, 8, 9, 10, 11, 12]
    index = NgramIndex(ends=lambda token: token == end)
    index.reset(history)
    assert index.match(limit=6).continuation == [13, end]
    assert NgramIndex().match(limit=6) is None
    unaware = NgramIndex()
    unaware.reset(history)
    assert unaware.match(limit=6).continuation == [13, end, 7, 8, 9, 10]


def test_a_suffix_that_occurs_often_continues_where_the_copy_stood_weighed_by_how_many_agree():
    # After an inserted line the suffix (say, a newline and an indent) occurs before every line of the file.
    history = [5, 1, 2, 30, 31, 6, 1, 2, 40, 41, 7, 1, 2, 40, 42, 8, 1, 2]
    index = NgramIndex()
    index.reset(history)
    recent = index.match(limit=3)
    assert (recent.n, recent.continuation, recent.start) == (2, [40, 42, 8], 13)
    # of the three occurrences, [1, 2, 40, 41] agrees for one token, then only with itself
    assert recent.agreement == pytest.approx((2 / 3, 1 / 3, 1 / 3))
    resumed = index.match(limit=3, near=4)  # the copy stood at position 4: the next occurrence from there
    assert (resumed.continuation, resumed.start) == ([40, 41, 7], 8)
    assert resumed.agreement == pytest.approx((2 / 3, 1 / 3, 1 / 3))
    assert index.match(limit=3, near=99).start == 13  # none that far on: the most recent
    index.reset([9, 3, 4, 9, 3])
    assert index.match(limit=2).agreement == (1.0, 1.0)  # a single occurrence contradicts nothing


def test_vocabularies_read_from_files_are_compared_as_read(tmp_path):
    """Headers read from files keep their vocabularies as the file's bytes: the same ones pass without decoding a
    token, and the first token that differs is named as it is with lists."""
    def written(name: str, tokens: list[str]) -> GGUFHeader:
        return read_file_header(write_llama(tmp_path / f"{name}.gguf", name=name, block_count=2, embedding=128, tokenizer={
            "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2}))

    vocabulary = [f"t{i}" for i in range(300)]
    target = written("target", vocabulary)
    check_compatible(target, written("padded", vocabulary + ["<pad>"] * 3))
    with pytest.raises(IncompatibleDraft, match="token 123 is 't123' in the target but 'other' in the draft"):
        check_compatible(target, written("other", vocabulary[:123] + ["other"] + vocabulary[124:]))


def test_a_model_that_cannot_rewind_decodes_plainly_and_says_why_in_figures_a_window_can_word(starter_model):
    """A recurrent or hybrid model (llama.cpp's llama_model_is_recurrent / _is_hybrid) cannot drop the cells of a rejected
    draft. None is small enough for a test, so the starter model is told it is one: the flag is all the session reads."""
    from spec_helpers import chat_prompt, load, run
    from runtime.speculative.session import Speculation

    target = load(starter_model)
    try:
        target.can_rewind = False
        speculation = Speculation(target)
        prompt = chat_prompt(target, "Repeat: one two three four five six seven eight.")
        asked = run(target, prompt, speculation.steppers_for("lookup")).stats
        assert (asked.speculation, asked.draft_tokens, asked.speculation_cannot_rewind) == ("off", 0, "llama")
        assert "cannot rewind" in asked.speculation_notice  # the runtime's English, for logs and older clients
        plain = run(target, prompt, speculation.steppers_for("off")).stats
        assert (plain.speculation_cannot_rewind, plain.speculation_notice) == ("", "")  # nothing was asked for: nothing to say
    finally:
        target.close()
