"""`n` choices in one request, through a real `lokal serve` (one reply streams at a time, one more may wait):
each choice decoded as a reply of its own, whole and streamed, and more than the server can hold refused."""

import openai
import pytest

from runtime.api.reply import choice_params
from runtime.protocol import ChatGenerateParams
from serve_process import MODEL_NAME

pytestmark = pytest.mark.slow

QUESTION = [{"role": "user", "content": "Write one sentence about the sea."}]
SAMPLED = dict(temperature=1.3, top_p=1.0, seed=11, max_tokens=16)


def test_sampled_choices_differ_and_each_is_the_same_again_with_the_same_seed(served):
    client = served.openai()
    reply = client.chat.completions.create(model=MODEL_NAME, messages=QUESTION, n=2, logprobs=True, **SAMPLED)
    assert [c.index for c in reply.choices] == [0, 1]
    first, second = (c.message.content for c in reply.choices)
    assert first and second and first != second
    again = client.chat.completions.create(model=MODEL_NAME, messages=QUESTION, n=2, **SAMPLED)
    assert [c.message.content for c in again.choices] == [first, second]
    # Choice 0 is the reply a request without n gets.
    alone = client.chat.completions.create(model=MODEL_NAME, messages=QUESTION, **SAMPLED)
    assert alone.choices[0].message.content == first
    # The prompt counted once, every choice's tokens (one log-probability each) added up.
    assert reply.usage.prompt_tokens == alone.usage.prompt_tokens
    assert reply.usage.completion_tokens == sum(len(c.logprobs.content) for c in reply.choices) > alone.usage.completion_tokens


def test_greedy_choices_agree(served):
    reply = served.openai().completions.create(model=MODEL_NAME, prompt="1, 2, 3,", n=2, max_tokens=6, temperature=0.0)
    assert [c.index for c in reply.choices] == [0, 1] and reply.choices[0].text == reply.choices[1].text != ""


def test_streamed_choices_carry_their_index_and_end_as_the_whole_ones(served):
    client = served.openai()
    whole = client.chat.completions.create(model=MODEL_NAME, messages=QUESTION, n=2, **SAMPLED)
    chunks = list(client.chat.completions.create(model=MODEL_NAME, messages=QUESTION, n=2, stream=True, stream_options={"include_usage": True}, **SAMPLED))
    texts = {0: "", 1: ""}
    finished = {}
    for chunk in chunks:
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""
            if choice.finish_reason:
                finished[choice.index] = choice.finish_reason
    assert [texts[0], texts[1]] == [c.message.content for c in whole.choices]
    assert finished == {0: whole.choices[0].finish_reason, 1: whole.choices[1].finish_reason}
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens and not chunks[-1].choices


def test_more_choices_than_the_server_can_hold_are_400_naming_n(served):
    with pytest.raises(openai.BadRequestError) as err:
        served.openai().chat.completions.create(model=MODEL_NAME, messages=QUESTION, n=3, max_tokens=2)
    assert err.value.body["param"] == "n" and "at most 2" in err.value.body["message"]
    reply = served.http("POST", "/v1/chat/completions", {"model": MODEL_NAME, "messages": QUESTION, "n": 0})
    assert reply.status == 400 and reply.json()["error"]["param"] == "n"
    assert served.openai().chat.completions.create(model=MODEL_NAME, messages=QUESTION, max_tokens=2).choices  # still serving


def test_only_the_first_choice_keeps_its_state():
    # The same request again restores the first choice's state, and the others share its cells (scheduler.py).
    choices = choice_params(ChatGenerateParams("c", [], prompt="x", seed=5), 3)
    assert [(c.conversation_id, c.seed, c.keeps_state) for c in choices] == [("c", 5, True), ("c/1", 6, False), ("c/2", 7, False)]
