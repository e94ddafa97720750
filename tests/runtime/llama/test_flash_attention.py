"""Flash attention as a load gets it (runtime/llama/llama_model.py, flash_attention): off when every layer is on
the CPU, unless the V cache is quantized or the load asks for it; llama.cpp's own log of the context it made
says the same. Through the runtime process the load result says which, and asking for it off with a
quantized V cache is refused plainly while the loaded model goes on serving."""

from __future__ import annotations

import re

import pytest
from llama_cpp._logger import set_verbose

from runtime.client import RuntimeClient
from runtime.gguf.reader import read_file_header
from runtime.llama.llama_model import LlamaModel, LoadSettings
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, ModelLoadParams, RpcError

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("asked", "type_v", "used", "llama_cpp_says"),
    [(None, "f16", False, "disabled"), (None, "q8_0", True, "enabled"), (True, "f16", True, "enabled"), (False, "f16", False, "disabled")],
)
def test_a_cpu_load_decodes_without_flash_attention_unless_the_v_cache_or_the_load_needs_it(starter_model, capsys, asked, type_v, used, llama_cpp_says):
    settings = LoadSettings(path=str(starter_model), n_ctx=256, n_gpu_layers=0, type_k="f16", type_v=type_v, flash_attn=asked, n_threads=1)
    capsys.readouterr()
    set_verbose(True)  # llama.cpp's log, which prints the context's parameters, goes to stderr
    try:
        llama = LlamaModel(settings, read_file_header(starter_model))
    finally:
        set_verbose(False)
    try:
        logged = re.findall(r"llama_context: flash_attn\s+= (\w+)", capsys.readouterr().err)
        assert (llama.flash_attn, logged) == (used, [llama_cpp_says])
        llama.decode(llama.tokenize("The capital of France is", add_bos=True, special=False))
        assert llama.tokens  # it decodes either way
    finally:
        llama.close()


def test_the_load_result_says_which_and_flash_attention_off_with_a_quantized_v_cache_is_refused(starter_model):
    with RuntimeClient() as client:
        client.initialize("pytest-flash-attention")
        loaded = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1))
        assert loaded.flash_attn is False
        assert client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1, type_v="q8_0")).flash_attn is True
        with pytest.raises(RpcError) as refused:
            client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1, type_v="q8_0", flash_attn=False))
        assert refused.value.code == ErrorCode.INVALID_PARAMS
        assert refused.value.message.startswith("params.flash_attn: a quantized V cache (type_v q8_0) needs flash attention")
        # The model loaded before the refusal still answers.
        reply = client.chat(ChatGenerateParams(conversation_id="c1", messages=[ChatMessage(role="user", content="Say hi.")], max_tokens=4, temperature=0.0))
        assert reply.text
