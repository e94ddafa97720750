"""The GGUF header reader on the real test model and on broken files."""

import pytest

from gguf_files import write_gguf
from runtime.gguf.reader import GGUFError, NeedMoreData, read_file_header


def test_reads_the_starter_models_header(starter_model):
    h = read_file_header(starter_model)
    assert h.architecture == "llama"
    assert h.quantization == "Q4_1"
    assert h.n_layers == 30
    assert h.n_head_kv_per_layer()[0] == 3
    assert h.key_length == h.value_length == 64
    # 30 layers x 3 KV heads x (64 + 64) x 2 bytes
    assert h.kv_bytes_per_token("f16", "f16") == 30 * 3 * 128 * 2
    assert h.kv_bytes_per_token("q8_0", "q8_0") == round(30 * 3 * 128 * 34 / 32)
    assert h.data_end == starter_model.stat().st_size
    assert h.tokenizer_model == "gpt2" and h.vocab_size == 49152
    assert h.chat_template and "<|im_start|>" in h.chat_template


def test_truncated_file_is_detected(starter_model, tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(starter_model.read_bytes()[: 40_000_000])
    with pytest.raises(GGUFError, match="truncated"):
        read_file_header(cut)
    tiny = tmp_path / "tiny.gguf"
    tiny.write_bytes(starter_model.read_bytes()[:1000])
    with pytest.raises(NeedMoreData):
        read_file_header(tiny)


def test_not_gguf(tmp_path):
    p = tmp_path / "notes.gguf"
    p.write_text("just some text\n")
    with pytest.raises(GGUFError, match="not a GGUF"):
        read_file_header(p)


def test_sparse_huge_file_reads_without_touching_data(tmp_path):
    p = write_gguf(tmp_path / "huge.gguf", metadata={"general.architecture": "llama"}, tensor_elements=50 * 2**30)
    h = read_file_header(p)
    assert h.tensor_bytes == 200 * 2**30
