"""Log-probabilities through a real `lokal serve`: OpenAI's chat and legacy shapes, whole and streamed, checked
against llama-cpp-python's own `create_completion(logprobs=)` on the same model file; the legacy `echo`, whose
prompt tokens are scored too (llama-server refuses echo; lm-evaluation-harness scores choices with it)."""

import math

import openai
import pytest

from serve_process import MODEL_NAME

pytestmark = pytest.mark.slow

GREEDY = dict(temperature=0.0, seed=7)
COUNTING = "1, 2, 3, 4, 5,"
FRUITS = [{"role": "user", "content": "Name three fruits."}]
CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"


def test_completion_logprobs_are_llama_cpp_pythons_own(served, starter_model):
    import llama_cpp

    # Flash attention as Lokal loads it: without, the figures differ by up to 0.04 on this model.
    reference = llama_cpp.Llama(str(starter_model), n_ctx=512, logits_all=True, flash_attn=True, verbose=False)
    expected = reference.create_completion(COUNTING, max_tokens=8, temperature=0.0, logprobs=2)["choices"][0]
    got = served.openai().completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=8, logprobs=2, **GREEDY).choices[0]
    assert got.text == expected["text"]
    want, have = expected["logprobs"], got.logprobs
    assert have.tokens == want["tokens"] and "".join(have.tokens) == got.text
    assert have.text_offset == want["text_offset"]  # from the prompt's start
    assert have.token_logprobs == pytest.approx([float(x) for x in want["token_logprobs"]], abs=2e-3)
    for mine, theirs in zip(have.top_logprobs, want["top_logprobs"]):
        # llama-cpp-python adds the chosen token to its top list; greedy, it is the most likely one already.
        assert mine.keys() == theirs.keys() and len(mine) == 2
        assert [mine[k] for k in theirs] == pytest.approx([float(v) for v in theirs.values()], abs=2e-3)


def test_chat_logprobs_cover_the_reply_token_by_token_whole_and_streamed(served):
    client = served.openai()
    whole = client.chat.completions.create(model=MODEL_NAME, messages=FRUITS, max_tokens=12, logprobs=True, top_logprobs=3, **GREEDY).choices[0]
    entries = whole.logprobs.content
    assert len(entries) == 12 and "".join(e.token for e in entries) == whole.message.content
    for entry in entries:
        assert bytes(entry.bytes).decode("utf-8", errors="replace") == entry.token
        assert [t.logprob for t in entry.top_logprobs] == sorted((t.logprob for t in entry.top_logprobs), reverse=True)
        assert len(entry.top_logprobs) == 3 and sum(math.exp(t.logprob) for t in entry.top_logprobs) <= 1.0 + 1e-6
        # Greedy: the token written is the most likely one, and its log-probability is that alternative's.
        assert (entry.token, entry.logprob) == (entry.top_logprobs[0].token, entry.top_logprobs[0].logprob)
    assert entries[-1].logprob > -2.0 and min(e.logprob for e in entries) < -0.5  # a real distribution, not all certain

    chunks = list(client.chat.completions.create(model=MODEL_NAME, messages=FRUITS, max_tokens=12, logprobs=True, top_logprobs=3, stream=True, **GREEDY))
    streamed = [e for c in chunks if c.choices and c.choices[0].logprobs for e in c.choices[0].logprobs.content]
    assert [e.token for e in streamed] == [e.token for e in entries]
    # The second request reads only the prompt's last token again (the cache keeps the rest): the same figures, to rounding.
    assert [e.logprob for e in streamed] == pytest.approx([e.logprob for e in entries], abs=1e-3)
    for chunk in chunks:  # each text chunk carries its own tokens
        if chunk.choices and chunk.choices[0].delta.content:
            assert "".join(e.token for e in chunk.choices[0].logprobs.content) == chunk.choices[0].delta.content


def test_without_top_logprobs_only_the_chosen_tokens_and_without_logprobs_none(served):
    client = served.openai()
    chosen = client.chat.completions.create(model=MODEL_NAME, messages=FRUITS, max_tokens=4, logprobs=True, **GREEDY).choices[0]
    assert len(chosen.logprobs.content) == 4 and all(e.top_logprobs == [] for e in chosen.logprobs.content)
    assert client.chat.completions.create(model=MODEL_NAME, messages=FRUITS, max_tokens=4, **GREEDY).choices[0].logprobs is None
    legacy = client.completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=4, logprobs=0, **GREEDY).choices[0].logprobs
    assert len(legacy.token_logprobs) == 4 and legacy.top_logprobs == [{}, {}, {}, {}]


def test_a_sampled_token_carries_its_own_log_probability_not_the_best_ones(served):
    reply = served.openai().chat.completions.create(model=MODEL_NAME, messages=FRUITS, max_tokens=24, temperature=1.5, seed=3, logprobs=True, top_logprobs=1)
    entries = reply.choices[0].logprobs.content
    assert all(e.logprob <= e.top_logprobs[0].logprob + 1e-6 for e in entries)
    assert any(e.token != e.top_logprobs[0].token for e in entries), "at temperature 1.5 some token is not the most likely one"


def test_echo_scores_the_prompt_as_generation_scored_the_same_tokens(served):
    client = served.openai()
    written = client.completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=8, logprobs=2, **GREEDY).choices[0]
    whole = COUNTING + written.text
    # lm-evaluation-harness's loglikelihood request: the text scored, nothing written.
    scored = client.completions.create(model=MODEL_NAME, prompt=whole, max_tokens=0, echo=True, logprobs=2, **GREEDY).choices[0]
    assert scored.text == whole
    lp = scored.logprobs
    assert "".join(lp.tokens) == whole and lp.text_offset[0] == 0
    assert lp.text_offset == [sum(len(t) for t in lp.tokens[:i]) for i in range(len(lp.tokens))]
    assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None  # the first token has nothing before it
    n = len(written.logprobs.tokens)
    assert lp.tokens[-n:] == written.logprobs.tokens
    # Read in one pass rather than a token at a time, the figures differ by rounding only; one row off would put
    # each token's figure on its neighbour, several units away.
    assert lp.token_logprobs[-n:] == pytest.approx(written.logprobs.token_logprobs, abs=0.1)
    for tops, token in zip(lp.top_logprobs[-n:], written.logprobs.tokens):
        assert max(tops, key=tops.get) == token  # the greedy reply took the likeliest token at each place

    echoed = client.completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=8, echo=True, logprobs=0, **GREEDY).choices[0]
    assert echoed.text == COUNTING + written.text
    assert echoed.logprobs.tokens[-n:] == written.logprobs.tokens and len(echoed.logprobs.tokens) == len(lp.tokens)


def test_echo_without_logprobs_streams_the_prompt_first(served):
    client = served.openai()
    chunks = list(client.completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=4, echo=True, stream=True, **GREEDY))
    texts = [c.choices[0].text for c in chunks if c.choices]
    whole = client.completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=4, echo=True, **GREEDY).choices[0].text
    assert texts[0] == COUNTING and "".join(texts) == whole and whole.startswith(COUNTING) and len(whole) > len(COUNTING)


@pytest.mark.parametrize(
    "path, fields, param",
    [
        (CHAT, {"logprobs": 3}, "logprobs"),  # the legacy form on the chat endpoint
        (CHAT, {"top_logprobs": 2}, "top_logprobs"),  # alternatives without logprobs
        (CHAT, {"logprobs": True, "top_logprobs": 21}, "top_logprobs"),
        (CHAT, {"logprobs": True, "top_logprobs": -1}, "top_logprobs"),
        (COMPLETIONS, {"logprobs": True}, "logprobs"),  # the chat form on the legacy endpoint
        (COMPLETIONS, {"logprobs": 21}, "logprobs"),
        (COMPLETIONS, {"logprobs": 2, "top_logprobs": 2}, "top_logprobs"),
        (COMPLETIONS, {"logprobs": 2, "echo": True, "stream": True}, "echo"),  # the prompt's figures come whole
    ],
)
def test_logprobs_asked_for_wrongly_are_400_naming_the_field(served, path, fields, param):
    body = {"model": MODEL_NAME, "max_tokens": 2, **({"messages": FRUITS} if path == CHAT else {"prompt": COUNTING}), **fields}
    reply = served.http("POST", path, body)
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["param"] == param and param in error["message"]
    assert served.openai().completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=1).choices[0].text  # still serving

