"""model.count_tokens through the real runtime process: a message being written, counted with the loaded model's own
tokenizer as a turn's content is read, and clear errors without a model or with bad params."""

from __future__ import annotations

import llama_cpp
import pytest

from runtime.protocol import CountTokensParams, ErrorCode, ModelLoadParams, RpcError, methods


def test_a_text_is_counted_as_the_loaded_model_reads_a_message(runtime, starter_model):
    with pytest.raises(RpcError) as caught:
        runtime.request(methods.MODEL_COUNT_TOKENS, CountTokensParams("Hello"))
    assert caught.value.code == ErrorCode.NO_MODEL_LOADED and "no model is loaded" in caught.value.message

    runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=2048))
    vocab = llama_cpp.Llama(str(starter_model), vocab_only=True, verbose=False)
    for text in ("Hello, world!", "Selamat pagi — apa kabar? 日本語", "<|im_end|> is a special token's name, counted as text", ""):
        counted = runtime.request(methods.MODEL_COUNT_TOKENS, CountTokensParams(text))
        assert counted.tokens == len(vocab.tokenize(text.encode(), add_bos=False, special=False)), text
        assert counted.n_ctx == 2048  # each conversation's context, whatever the sequences it is split into
    long = "The harbour wall was discussed at length. " * 5_000
    assert runtime.request(methods.MODEL_COUNT_TOKENS, CountTokensParams(long)).tokens > 2048  # no cap at the context


@pytest.mark.parametrize("params", [{}, {"text": 7}, {"text": None}, {"text": ["a"]}, {"text": "a", "extra": 1}])
def test_bad_params_are_invalid_params_and_the_runtime_keeps_serving(runtime, params):
    with pytest.raises(RpcError) as caught:
        runtime.request_unchecked("model.count_tokens", params, timeout=30)
    assert caught.value.code == ErrorCode.INVALID_PARAMS and "params" in caught.value.message, caught.value.message
    assert runtime.request(methods.RUNTIME_METRICS).rss_bytes > 0
