"""Quantization levels, GGUF headers over HTTP ranges, fit labels and draft compatibility."""

from __future__ import annotations

import pytest

from runtime.llama.memory import estimate_load
from runtime.gguf.reader import read_file_header
from runtime.hub import fit
from runtime.speculative.compat import incompatibilities
from runtime.hub.quants import RemoteFile, find_level, group_levels, incomplete_split, quant_name
from runtime.hub.remote_gguf import fetch_header
from runtime.hub.service import HubService
from runtime.protocol import Device, DraftCheckParams, ErrorCode, HubQuantsParams, ModelRef, RpcError
from sample_repos import DRAFT_REPO, SMOL_FILE, SMOL_REPO, TARGET_FILE, TARGET_REPO


def files(*names, size=100):
    return [RemoteFile(n, size, "0" * 64) for n in names]


def test_file_names_map_to_quantization_levels():
    assert quant_name("Qwen2.5-7B-Instruct-Q4_K_M.gguf") == "Q4_K_M"
    assert quant_name("qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf") == "Q4_K_M"
    assert quant_name("Llama-3.2-1B-Instruct-IQ2_XXS.gguf") == "IQ2_XXS"
    assert quant_name("model.IQ4_NL.gguf") == "IQ4_NL"
    assert quant_name("gemma-3-1b-it-bf16.gguf") == "BF16"
    assert quant_name("SmolLM2-1.7B-Instruct-Q6_K_L.gguf") == "Q6_K_L"
    assert quant_name("phi-3-mini-4k-instruct-fp16.gguf") == "F16"
    assert quant_name("README.gguf") is None


def test_levels_group_split_files_skip_projectors_and_sort_by_precision():
    levels = group_levels(files(
        "m-Q8_0.gguf", "m-Q2_K.gguf", "README.md", "mmproj-m-f16.gguf",
        "m-Q6_K-00002-of-00002.gguf", "m-Q6_K-00001-of-00002.gguf", "m-IQ3_XS.gguf", "m-F16.gguf",
    ))
    assert [lv.name for lv in levels] == ["Q2_K", "IQ3_XS", "Q6_K", "Q8_0", "F16"]
    q6 = levels[2]
    assert [f.path for f in q6.files] == ["m-Q6_K-00001-of-00002.gguf", "m-Q6_K-00002-of-00002.gguf"]
    assert q6.size == 200 and incomplete_split(q6) is None
    [partial] = group_levels(files("m-Q5_K_M-00001-of-00003.gguf", "m-Q5_K_M-00003-of-00003.gguf"))
    assert "2 of 3 parts" in incomplete_split(partial)
    assert find_level(levels, None).name == "Q2_K"  # no Q4_K_M here: the first
    assert find_level(group_levels(files("a-Q8_0.gguf", "a-Q4_K_M.gguf")), None).name == "Q4_K_M"
    assert find_level(levels, "q8_0").name == "Q8_0"
    assert find_level(levels, "Q4_0") is None


def test_remote_header_is_read_with_ranges_only_and_matches_the_local_file(hub, starter_model):
    url = f"{hub.url}/{SMOL_REPO}/resolve/main/{SMOL_FILE}"
    header, stream = fetch_header(url)
    local = read_file_header(starter_model)
    assert header.metadata == local.metadata
    assert header.tensor_bytes == local.tensor_bytes and header.header_size == local.header_size
    assert stream.total_size == starter_model.stat().st_size
    assert stream.fetched < 5 * 2**20 < stream.total_size / 10  # the header, never the weights
    ranges = hub.ranges_for(SMOL_FILE)
    assert ranges and all(r and r.startswith("bytes=") for r in ranges)


def test_remote_header_when_the_server_ignores_ranges(hub, starter_model):
    hub.faults.ignore_range = True
    header, stream = fetch_header(f"{hub.url}/{SMOL_REPO}/resolve/main/{SMOL_FILE}")
    assert header.n_layers == read_file_header(starter_model).n_layers
    assert stream.fetched < 10 * 2**20


def test_quants_label_each_level_with_its_fit(hub, starter_model):
    service = HubService(lambda *_: None)
    result = service.quants(HubQuantsParams(SMOL_REPO, n_ctx=2048))
    by_name = {lv.name: lv for lv in result.levels}
    assert list(by_name) == ["Q4_1", "Q8_0", "F32"]
    assert by_name["Q8_0"].files == ["SmolLM2-135M-Instruct-Q8_0-00001-of-00002.gguf", "SmolLM2-135M-Instruct-Q8_0-00002-of-00002.gguf"]
    assert by_name["Q4_1"].sha256 == [hub.repos[SMOL_REPO].files[SMOL_FILE].sha256]
    assert result.commit == hub.repos[SMOL_REPO].commit
    h = result.header
    assert (h.architecture, h.n_layers, h.n_head_kv, h.key_length, h.value_length, h.vocab_size) == ("llama", 30, 3, 64, 64, 49152)
    assert h.tokenizer_model == "gpt2" and h.tokenizer_pre == "smollm"
    q41 = by_name["Q4_1"].fit
    expected = estimate_load(read_file_header(starter_model), 2048)
    assert q41.ram_needed == expected.ram_peak
    assert q41.kv_cache == 30 * 3 * (64 + 64) * 2 * 2048  # layers x kv heads x (key + value length) x f16 x n_ctx
    assert q41.label == ("gpu" if result.gpu_free > q41.gpu_needed else "ram")
    assert by_name["F32"].fit.label == "too_big" and "too big" in by_name["F32"].fit.detail


def test_with_its_draft_partner_each_level_fits_with_both_models_counted(hub):
    """"Download with its draft model" loads the two together: the fit the browser shows counts both."""
    service = HubService(lambda *_: None)
    alone = service.quants(HubQuantsParams(TARGET_REPO, n_ctx=2048)).levels[0].fit
    paired = service.quants(HubQuantsParams(TARGET_REPO, n_ctx=2048, draft=ModelRef(repo=DRAFT_REPO))).levels[0].fit
    draft = service.draft_check(DraftCheckParams(target=ModelRef(repo=TARGET_REPO), draft=ModelRef(repo=DRAFT_REPO))).draft
    assert paired.weights == alone.weights + draft.tensor_bytes
    assert paired.kv_cache == alone.kv_cache + draft.kv_bytes_per_token * 2048
    assert paired.ram_needed > alone.ram_needed and "with the draft model Tiny Coder 0.5B Instruct counted in" in paired.detail
    assert (paired.draft, alone.draft, paired.ram_available > 0) == ("Tiny Coder 0.5B Instruct", "", True)  # what a window says it from

    # A partner that cannot be read leaves the levels listed and judged alone, saying why.
    lost = service.quants(HubQuantsParams(TARGET_REPO, n_ctx=2048, draft=ModelRef(repo="lokal-test/nope"))).levels[0].fit
    assert lost.weights == alone.weights and "without the draft model" in lost.detail and "lokal-test/nope" in lost.detail
    assert lost.draft == "" and "lokal-test/nope" in lost.draft_unknown


def test_quantized_kv_cache_shrinks_the_estimate(hub):
    service = HubService(lambda *_: None)
    f16 = service.quants(HubQuantsParams(SMOL_REPO, n_ctx=8192)).levels[0].fit
    q8 = service.quants(HubQuantsParams(SMOL_REPO, n_ctx=8192, type_k="q8_0", type_v="q8_0")).levels[0].fit
    assert q8.kv_cache == pytest.approx(f16.kv_cache * 34 / 64, rel=0.01)
    assert q8.ram_needed < f16.ram_needed


def test_fit_labels_for_a_gpu_machine_and_a_small_machine(starter_model):
    estimate = estimate_load(read_file_header(starter_model), 4096)
    gpu = Device("Test GPU", "gpu", 8 << 30, 6 << 30)
    assert fit.judge(estimate, [gpu], 1 << 30).label == "gpu"
    small_gpu = Device("Small GPU", "gpu", 256 << 20, 100 << 20)
    ram_fit = fit.judge(estimate, [small_gpu], 4 << 30)
    assert ram_fit.label == "ram" and "GPU" in ram_fit.detail
    assert fit.judge(estimate, [], 100 << 20).label == "too_big"


def test_quants_of_unknown_repository_is_a_clear_error(hub):
    with pytest.raises(RpcError) as e:
        HubService(lambda *_: None).quants(HubQuantsParams("lokal-test/nope"))
    assert e.value.code == ErrorCode.REPO_NOT_FOUND and e.value.data == {"repo": "lokal-test/nope", "has_token": False}


def test_draft_compatibility_from_remote_headers(hub):
    service = HubService(lambda *_: None)
    ok = service.draft_check(DraftCheckParams(target=ModelRef(repo=TARGET_REPO), draft=ModelRef(repo=DRAFT_REPO)))
    assert ok.compatible, ok.reasons
    assert ok.target.n_layers != ok.draft.n_layers  # two different models, one vocabulary
    bad = service.draft_check(DraftCheckParams(target=ModelRef(repo=TARGET_REPO), draft=ModelRef(repo=SMOL_REPO, quant="Q4_1")))
    assert not bad.compatible
    assert any("differ in size" in r for r in bad.reasons)
    ranges = hub.ranges_for(TARGET_FILE)
    assert ranges and all(r and r.startswith("bytes=") for r in ranges)  # headers over ranges, nothing downloaded


def test_draft_with_different_special_tokens_is_refused(starter_model):
    target = read_file_header(starter_model)
    draft = read_file_header(starter_model)
    draft.metadata["tokenizer.ggml.eos_token_id"] = 7
    assert incompatibilities(target, draft) == ["the end-of-text tokens differ: 2 in the target, 7 in the draft"]
    draft = read_file_header(starter_model)
    draft.metadata["tokenizer.ggml.tokens"] = list(draft.metadata["tokenizer.ggml.tokens"])
    draft.metadata["tokenizer.ggml.tokens"][100] = "something else"
    assert incompatibilities(target, draft)[0].startswith("the vocabularies differ: token 100 is ")
    assert incompatibilities(target, read_file_header(starter_model)) == []
