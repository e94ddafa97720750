"""Prompts given as token ids, and several prompts in one request, through a real `lokal serve`: what
lm-evaluation-harness's `local-completions` sends by default (its loglikelihood request: the context and
continuation as ids, `echo`, `max_tokens` 1, `logprobs` 1), and OpenAI's batch of prompts, each with its own choices."""

import pytest

from serve_process import MODEL_NAME

pytestmark = pytest.mark.slow

COUNTING = "1, 2, 3, 4, 5,"
# SmolLM2's tokens of COUNTING (its tokenizer adds no BOS): "1" "," " " "2" "," " " ... "5" ","
COUNTING_IDS = [33, 28, 216, 34, 28, 216, 35, 28, 216, 36, 28, 216, 37, 28]
GREEDY = dict(temperature=0.0, seed=7)
COMPLETIONS = "/v1/completions"


def completion(served, **fields):
    reply = served.http("POST", COMPLETIONS, {"model": MODEL_NAME, **fields})
    assert reply.status == 200, reply.body
    return reply.json()


def test_token_ids_are_the_text_they_spell(served):
    as_text = completion(served, prompt=COUNTING, max_tokens=6, **GREEDY)
    as_ids = completion(served, prompt=COUNTING_IDS, max_tokens=6, **GREEDY)
    batched = completion(served, prompt=[COUNTING_IDS], max_tokens=6, **GREEDY)  # a batch of one
    assert as_ids["choices"][0]["text"] == as_text["choices"][0]["text"] == batched["choices"][0]["text"] != ""
    assert as_ids["usage"]["prompt_tokens"] == len(COUNTING_IDS)
    echoed = completion(served, prompt=COUNTING_IDS, max_tokens=2, echo=True, **GREEDY)["choices"][0]["text"]
    assert echoed.startswith(COUNTING) and len(echoed) > len(COUNTING)


def test_lm_evaluation_harness_loglikelihood_lines_up_with_the_ids_sent(served):
    context, continuation = COUNTING_IDS[:9], COUNTING_IDS[9:]  # "1, 2, 3, " and "4, 5,"
    # lm-evaluation-harness's own request and its own reading of the answer (models/openai_completions.py).
    body = completion(served, prompt=[context + continuation], max_tokens=1, logprobs=1, echo=True, temperature=0, seed=1234)
    logprobs = body["choices"][0]["logprobs"]
    assert len(logprobs["tokens"]) == len(logprobs["token_logprobs"]) == len(context + continuation) + 1  # every id, then the one written
    assert logprobs["token_logprobs"][0] is None and logprobs["top_logprobs"][0] is None
    assert "".join(logprobs["tokens"][: len(COUNTING_IDS)]) == COUNTING
    scored = logprobs["token_logprobs"][len(context) : -1]
    tops = logprobs["top_logprobs"][len(context) : -1]
    assert len(scored) == len(continuation) and all(len(top) == 1 for top in tops)
    is_greedy = all(mine == max(top.values()) for mine, top in zip(scored, tops))
    assert is_greedy  # counting on is what this model does

    # The same figures as the text's echo, which scores the same tokens.
    text = completion(served, prompt=COUNTING, max_tokens=1, logprobs=1, echo=True, temperature=0)["choices"][0]["logprobs"]
    assert text["tokens"] == logprobs["tokens"]
    assert text["token_logprobs"][1:] == pytest.approx(logprobs["token_logprobs"][1:], abs=1e-3)

    # Ids that split a character's bytes between them: still one entry per id, though their texts cannot spell it.
    split = [23274, 115, 40993, 179, 120, 248, 7365, 117, 39958, 19076]  # "日本語です。": "日" is two ids, "語" and "で" share three
    japanese = completion(served, prompt=[split], max_tokens=1, logprobs=1, echo=True, temperature=0)["choices"][0]
    assert japanese["text"].startswith("日本語です。")
    assert len(japanese["logprobs"]["tokens"]) == len(split) + 1 and japanese["logprobs"]["token_logprobs"][0] is None
    assert None not in japanese["logprobs"]["token_logprobs"][1:]
    # Cut mid-character, as a harness cutting a long context from the left may: still one entry per id.
    cut = completion(served, prompt=[split[4:]], max_tokens=1, logprobs=1, echo=True, temperature=0)["choices"][0]["logprobs"]
    assert len(cut["tokens"]) == len(split[4:]) + 1 and cut["token_logprobs"][0] is None
    # The same text as text: the same entries (this model adds no BOS), though no text of theirs spells its first character.
    as_text = completion(served, prompt="日本語です。", max_tokens=1, logprobs=1, echo=True, temperature=0)["choices"][0]["logprobs"]
    assert as_text["tokens"] == japanese["logprobs"]["tokens"] and as_text["token_logprobs"][0] is None

    # A continuation the model would not write: lower log-likelihood, and not greedy.
    odd = completion(served, prompt=[context + [37, 28, 216, 33]], max_tokens=1, logprobs=1, echo=True, temperature=0)["choices"][0]["logprobs"]
    assert sum(odd["token_logprobs"][len(context) : -1]) < sum(scored) - 2
    assert any(mine < max(top.values()) for mine, top in zip(odd["token_logprobs"][len(context) : -1], odd["top_logprobs"][len(context) : -1]))


def test_several_prompts_each_get_their_choices_in_order(served):
    one = completion(served, prompt="The sea is", max_tokens=5, **GREEDY)
    two = completion(served, prompt=COUNTING_IDS, max_tokens=5, **GREEDY)
    both = completion(served, prompt=[[*COUNTING_IDS[:3]], [*COUNTING_IDS]], max_tokens=5, **GREEDY)
    assert [c["index"] for c in both["choices"]] == [0, 1]
    assert both["choices"][1]["text"] == two["choices"][0]["text"]
    assert both["usage"]["prompt_tokens"] == 3 + len(COUNTING_IDS)  # each prompt counted once
    texts = completion(served, prompt=["The sea is", "The sea is"], max_tokens=5, **GREEDY)  # the same prompt twice
    assert [c["text"] for c in texts["choices"]] == [one["choices"][0]["text"]] * 2
    assert texts["usage"]["prompt_tokens"] == 2 * one["usage"]["prompt_tokens"]

    # Streamed with echo: each prompt's text first, under its own index, then its completion.
    chunks = served.openai().completions.create(model=MODEL_NAME, prompt=[COUNTING_IDS[:3], COUNTING_IDS], max_tokens=5, echo=True, stream=True, **GREEDY)
    streamed = {0: "", 1: ""}
    for chunk in chunks:
        for choice in chunk.choices:
            streamed[choice.index] += choice.text
    assert streamed == {0: "1, " + both["choices"][0]["text"], 1: COUNTING + two["choices"][0]["text"]}


@pytest.mark.parametrize(
    "prompt, param, words",
    [
        ([1, 49152], "prompt", "prompt[1]: 49152 is not a token of this model"),  # past the vocabulary
        ([[5], [-3]], "prompt[1]", "prompt[1][0]: -3 is not a token"),
        ([], "prompt", "must not be an empty list"),
        ([[1], []], "prompt[1]", "must not be empty"),
        (["one", ""], "prompt[1]", "must not be empty"),
        (["one", [1, 2]], "prompt", "all of one kind"),  # text and ids mixed
        ([True, False], "prompt", "all of one kind"),  # not ids
        ({"text": "one"}, "prompt", "all of one kind"),
        ([[1], [2], [3]], "prompt", "at most 2 choices"),  # more than one streaming and one waiting
    ],
)
def test_bad_prompts_are_400_naming_them_and_the_server_keeps_serving(served, prompt, param, words):
    reply = served.http("POST", COMPLETIONS, {"model": MODEL_NAME, "prompt": prompt, "max_tokens": 1})
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["param"] == param and words in error["message"], error
    assert completion(served, prompt=COUNTING_IDS, max_tokens=1)["choices"][0]["text"]  # still serving
