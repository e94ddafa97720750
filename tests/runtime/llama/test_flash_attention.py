"""Flash attention as a load gets it: as asked (ModelLoadParams.flash_attn), on for a quantized V cache, else
llama.cpp's auto; llama.cpp's own log of the context it made says the same. Off counts the attention scores it
keeps in the fit check. Through the runtime process the load result says which, and flash attention off with a
quantized V cache is refused plainly while the loaded model goes on serving."""

from __future__ import annotations

import re

import pytest
from llama_cpp._logger import set_verbose

from runtime.client import RuntimeClient
from runtime.engine.engine import check_fits
from runtime.gguf.reader import read_file_header
from runtime.llama.llama_model import LlamaModel, LoadSettings
from runtime.llama.memory import estimate_load
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, ModelLoadParams, RpcError

pytestmark = pytest.mark.slow

N_BATCH = 512


@pytest.mark.parametrize(
    ("asked", "type_v", "used", "llama_cpp_says"),
    [(False, "f16", False, "disabled"), (True, "f16", True, "enabled"), (None, "q8_0", True, "enabled"), (None, "f16", None, "auto")],
)
def test_the_model_loads_with_the_choice_and_llama_cpp_makes_its_context_so(starter_model, capsys, asked, type_v, used, llama_cpp_says):
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


def test_off_counts_the_attention_scores_it_keeps_in_the_fit_check(starter_model):
    header = read_file_header(starter_model)
    n_ctx = 4096 * 2
    with_flash = estimate_load(header, n_ctx, n_ubatch=N_BATCH)
    without = estimate_load(header, n_ctx, n_ubatch=N_BATCH, flash_attn=False)
    scores = 4 * N_BATCH * n_ctx * header.n_head
    assert without.ram_peak - with_flash.ram_peak == scores and without.compute - with_flash.compute == scores
    params = ModelLoadParams(path=str(starter_model), n_ctx=n_ctx)
    check_fits(header, params, N_BATCH, [], with_flash.ram_peak, layers=0)  # auto: fits
    check_fits(header, ModelLoadParams(path=str(starter_model), n_ctx=n_ctx, flash_attn=False), N_BATCH, [], without.ram_peak, layers=0)
    with pytest.raises(RpcError) as short:
        check_fits(header, ModelLoadParams(path=str(starter_model), n_ctx=n_ctx, flash_attn=False), N_BATCH, [], without.ram_peak - 1, layers=0)
    assert short.value.code == ErrorCode.MODEL_TOO_LARGE


def test_the_load_result_says_which_and_flash_attention_off_with_a_quantized_v_cache_is_refused(starter_model):
    with RuntimeClient() as client:
        client.initialize("pytest-flash-attention")
        assert client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1)).flash_attn is None  # llama.cpp's auto
        assert client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1, flash_attn=False)).flash_attn is False
        assert client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1, type_v="q8_0")).flash_attn is True
        with pytest.raises(RpcError) as refused:
            client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1, type_v="q8_0", flash_attn=False))
        assert refused.value.code == ErrorCode.INVALID_PARAMS
        assert refused.value.message.startswith("params.flash_attn: a quantized V cache (type_v q8_0) needs flash attention")
        # The model loaded before the refusal still answers.
        reply = client.chat(ChatGenerateParams(conversation_id="c1", messages=[ChatMessage(role="user", content="Say hi.")], max_tokens=4, temperature=0.0))
        assert reply.text
