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
