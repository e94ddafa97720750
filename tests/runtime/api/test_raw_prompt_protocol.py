"""The runtime protocol's raw-prompt path (what /v1/completions uses): no chat template, text continued as is."""

import pytest

from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, RpcError

pytestmark = pytest.mark.slow


def test_raw_prompt_is_continued_without_the_chat_template(loaded_runtime):
    raw = loaded_runtime.chat(ChatGenerateParams("t", [], max_tokens=6, temperature=0.0, prompt="1, 2, 3, 4, 5,"), timeout=120)
    assert raw.text.startswith(" 6, 7"), raw.text
    templated = loaded_runtime.chat(ChatGenerateParams("t", [ChatMessage("user", "1, 2, 3, 4, 5,")], max_tokens=1, temperature=0.0), timeout=120)
    # The same text through the chat path is wrapped in the template's roles and markers.
    assert templated.stats.prompt_tokens > raw.stats.prompt_tokens + 5


def test_empty_raw_prompt_is_refused_and_the_runtime_keeps_serving(loaded_runtime):
    with pytest.raises(RpcError) as err:
        loaded_runtime.chat(ChatGenerateParams("t", [], max_tokens=2, prompt=""), timeout=60)
    assert err.value.code == ErrorCode.INVALID_PARAMS and "prompt" in err.value.message
    assert loaded_runtime.chat(ChatGenerateParams("t", [], max_tokens=1, prompt="Hello"), timeout=60).stats.completion_tokens == 1


def test_raw_prompt_of_the_wrong_type_is_invalid_params(loaded_runtime):
    with pytest.raises(RpcError) as err:
        loaded_runtime.request_unchecked("chat.generate", {"conversation_id": "t", "messages": [], "prompt": 5}, timeout=60)
    assert err.value.code == ErrorCode.INVALID_PARAMS and "params.prompt" in err.value.message


def test_prompt_tokens_are_read_exactly_as_given(loaded_runtime):
    text = loaded_runtime.chat(ChatGenerateParams("t", [], max_tokens=6, temperature=0.0, prompt="1, 2, 3, 4, 5,"), timeout=120)
    # SmolLM2's tokens of that text (its tokenizer adds no BOS), given as ids: the same prompt, the same reply.
    ids = [33, 28, 216, 34, 28, 216, 35, 28, 216, 36, 28, 216, 37, 28]
    given = loaded_runtime.chat(ChatGenerateParams("u", [], max_tokens=6, temperature=0.0, prompt="1, 2, 3, 4, 5,", prompt_tokens=ids), timeout=120)
    assert given.text == text.text and given.stats.prompt_tokens == text.stats.prompt_tokens == len(ids)
    # "The sea is" spelled in five ids where its tokenizer writes three ("The" " sea" " is"): the five are read.
    spelled = loaded_runtime.chat(ChatGenerateParams("v", [], max_tokens=1, prompt="The sea is", prompt_tokens=[504, 262, 22125, 2056, 99]), timeout=120)
    assert spelled.stats.prompt_tokens == 5


@pytest.mark.parametrize(
    "fields, names",
    [
        ({"prompt_tokens": [1, 2]}, "params.prompt_tokens"),  # ids without their text
        ({"prompt": "x", "prompt_tokens": []}, "params.prompt_tokens"),
        ({"prompt": "x", "prompt_tokens": [1, 49152]}, "params.prompt_tokens[1]"),  # past the vocabulary
        ({"prompt": "x", "prompt_tokens": [-1]}, "params.prompt_tokens[0]"),
        ({"prompt": "x", "prompt_tokens": ["1"]}, "params.prompt_tokens"),
    ],
)
def test_bad_prompt_tokens_are_invalid_params_and_the_runtime_keeps_serving(loaded_runtime, fields, names):
    with pytest.raises(RpcError) as err:
        loaded_runtime.request_unchecked("chat.generate", {"conversation_id": "t", "messages": [], "max_tokens": 1, **fields}, timeout=60)
    assert err.value.code == ErrorCode.INVALID_PARAMS and names in err.value.message, err.value.message
    assert loaded_runtime.chat(ChatGenerateParams("t", [], max_tokens=1, prompt="Hello"), timeout=60).stats.completion_tokens == 1
