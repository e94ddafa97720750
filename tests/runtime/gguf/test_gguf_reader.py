"""The GGUF header reader on the real test model and on broken files."""

import pytest

from gguf_files import write_gguf
from runtime.gguf import reader
from runtime.gguf.reader import GGUFError, NeedMoreData, Strings, read_file_header


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


@pytest.mark.parametrize("block", [8, 40, 256 * 1024])
def test_a_string_array_is_read_whole_and_the_header_goes_on_after_it(tmp_path, monkeypatch, block):
    """Read in blocks of any size (8 bytes: one length at a time), the array keeps every token, decoded as the file
    spells it (invalid UTF-8 replaced), and the entries after it are read from where it ends."""
    monkeypatch.setattr(reader, "BLOCK_BYTES", block)
    tokens = ["", "a", "héllo", "<|im_end|>", "x" * 300, *(f"t{i}" for i in range(500))]
    merges = [f"m {i}" for i in range(100)]
    p = write_gguf(tmp_path / "v.gguf", metadata={
        "general.architecture": "llama", "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.merges": merges, "general.name": "after the arrays",
    }, tensor_elements=16)
    h = read_file_header(p)
    read = h.metadata["tokenizer.ggml.tokens"]
    assert isinstance(read, Strings) and len(read) == len(tokens) == h.vocab_size
    assert read == tokens and list(read) == tokens and read[2] == "héllo" and read[-1] == "t499" and read[1:3] == ["a", "héllo"]
    assert h.metadata["tokenizer.ggml.merges"] == 100  # count-only: the app never reads them
    assert h.metadata["general.name"] == "after the arrays" and h.data_end == p.stat().st_size
    with pytest.raises(IndexError):
        read[len(tokens)]


def test_two_vocabularies_compare_as_their_bytes(tmp_path):
    def vocabulary(tokens):
        return read_file_header(write_gguf(tmp_path / f"{len(tokens)}-{tokens[-1]}.gguf", metadata={"tokenizer.ggml.tokens": tokens}, tensor_elements=4)).metadata["tokenizer.ggml.tokens"]

    a, b, c = vocabulary(["x", "y", "z"]), vocabulary(["x", "y", "z"]), vocabulary(["x", "y", "w"])
    assert a == b and a != c and a.prefix_bytes(2) == c.prefix_bytes(2) and a.prefix_bytes(3) != c.prefix_bytes(3)
