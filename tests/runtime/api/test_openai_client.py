"""The official `openai` client against a real `lokal serve` on loopback, with the real starter model."""

import pytest

from serve_process import MODEL_NAME

pytestmark = pytest.mark.slow

GREEDY = dict(temperature=0.0, seed=7)


def test_models_lists_the_loaded_model(served):
    models = served.openai().models.list()
    assert [m.id for m in models.data] == [MODEL_NAME]
    assert served.openai().models.retrieve(MODEL_NAME).id == MODEL_NAME
    offload = models.data[0].model_extra["offload"]  # where its layers run: `lokal serve` loads with Auto
    assert (offload["requested"], offload["layers"], offload["layers_total"], offload["reason"]) == (None, 0, 31, "this build runs on the CPU")


def test_chat_non_streaming_reports_usage_and_length(served):
    reply = served.openai().chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Name three fruits."}], max_tokens=6, **GREEDY)
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and choice.message.content
    assert choice.finish_reason == "length"
    assert reply.usage.completion_tokens == 6
    assert reply.usage.prompt_tokens > 5
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + 6


def test_chat_streaming_sends_the_same_reply_as_chunks(served):
    client = served.openai()
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "What is the capital of France?"}]
    whole = client.chat.completions.create(model=MODEL_NAME, messages=messages, max_tokens=12, **GREEDY)
    stream = client.chat.completions.create(model=MODEL_NAME, messages=messages, max_tokens=12, stream=True, stream_options={"include_usage": True}, **GREEDY)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == whole.choices[0].finish_reason
    assert len({c.id for c in chunks}) == 1
    usage = chunks[-1].usage
    assert not chunks[-1].choices and usage.completion_tokens == whole.usage.completion_tokens
    # Same conversation again: the runtime's KV cache already holds the whole prompt.
    assert usage.prompt_tokens_details.cached_tokens == usage.prompt_tokens - 1


def test_stop_sequence_ends_the_reply_before_it(served):
    client = served.openai()
    free = client.completions.create(model=MODEL_NAME, prompt="1, 2, 3, 4, 5,", max_tokens=12, **GREEDY).choices[0].text
    assert " 7" in free, free  # the model counts on; the stop below must cut it
    stopped = client.completions.create(model=MODEL_NAME, prompt="1, 2, 3, 4, 5,", max_tokens=12, stop=[" 7"], **GREEDY).choices[0]
    assert stopped.finish_reason == "stop"
    assert stopped.text == free[: free.index(" 7")]


def test_completions_continue_a_raw_prompt(served):
    client = served.openai()
    reply = client.completions.create(model=MODEL_NAME, prompt="1, 2, 3, 4, 5,", max_tokens=8, **GREEDY)
    assert reply.object == "text_completion"
    assert reply.choices[0].text.startswith(" 6, 7"), reply.choices[0].text
    assert reply.usage.completion_tokens == 8
    streamed = "".join(c.choices[0].text for c in client.completions.create(model=MODEL_NAME, prompt="1, 2, 3, 4, 5,", max_tokens=8, stream=True, **GREEDY))
    assert streamed == reply.choices[0].text


def test_seed_makes_sampling_repeatable(served):
    client = served.openai()
    ask = lambda seed: client.completions.create(model=MODEL_NAME, prompt="Once upon a time", max_tokens=10, temperature=1.0, top_p=0.95, seed=seed).choices[0].text
    assert ask(11) == ask(11)
    assert len({ask(11), ask(12), ask(13)}) > 1


def test_follow_up_turn_reuses_the_conversation_prefix(served):
    client = served.openai()
    history = [{"role": "user", "content": "Name a colour."}]
    first = client.chat.completions.create(model=MODEL_NAME, messages=history, max_tokens=8, **GREEDY)
    history += [{"role": "assistant", "content": first.choices[0].message.content}, {"role": "user", "content": "Another one?"}]
    second = client.chat.completions.create(model=MODEL_NAME, messages=history, max_tokens=8, **GREEDY)
    cached = second.usage.prompt_tokens_details.cached_tokens
    assert cached >= first.usage.prompt_tokens
    assert second.usage.prompt_tokens - cached <= 20  # only the new turn is evaluated


def test_max_tokens_is_capped_by_the_context(served):
    # n_ctx is 1024: a max_tokens far past it is accepted and capped, and the reply still ends.
    reply = served.openai().completions.create(model=MODEL_NAME, prompt="1, 2, 3, 4, 5,", max_tokens=10**9, stop=[" 9"], **GREEDY)
    assert reply.choices[0].finish_reason == "stop"
    assert served.openai().models.retrieve(MODEL_NAME).model_extra["context_length"] == 1024


def test_zero_max_tokens_returns_an_empty_reply(served):
    client = served.openai()
    reply = client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Hi"}], max_tokens=0)
    assert reply.choices[0].message.content == "" and reply.choices[0].finish_reason == "length"
    chunks = list(client.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=0, stream=True))
    assert "".join(c.choices[0].text for c in chunks) == "" and chunks[-1].choices[0].finish_reason == "length"
