"""Which local files can draft for a target (runtime/models/drafts.py): the header check hub.draft_check makes."""

from __future__ import annotations

from gguf_files import TINY_VOCABULARY, tokenizer_metadata, write_draft_pair, write_llama
from runtime.models import drafts


def test_auto_is_the_smallest_compatible_model_smaller_than_the_target(tmp_path):
    target, draft = write_draft_pair(tmp_path)
    tiny = write_llama(tmp_path / "tiny-coder-0.1b-q4_k_m.gguf", name="Tiny Coder 0.1B", block_count=4, embedding=256, tokenizer=tokenizer_metadata(TINY_VOCABULARY))
    other = write_llama(tmp_path / "other-0.05b-q4_k_m.gguf", name="Other", block_count=2, embedding=128, tokenizer=tokenizer_metadata(TINY_VOCABULARY[::-1]))
    files = [(str(p), p.stat().st_size) for p in (target, draft, tiny, other)]
    found = {o.path: o for o in drafts.options(str(target), files)}
    assert str(target) not in found, "a model is not offered as its own draft"
    assert found[str(draft)].compatible and found[str(tiny)].compatible
    assert not found[str(other)].compatible and any("token" in reason for reason in found[str(other)].reasons)
    assert drafts.auto_choice(target.stat().st_size, found.values()).path == str(tiny)
    assert drafts.resolve("auto", str(target), files) == str(tiny)
    assert drafts.resolve("none", str(target), files) is None
    assert drafts.resolve(str(draft), str(target), files) == str(draft)
    # Nothing smaller and compatible: auto loads none.
    assert drafts.resolve("auto", str(tiny), files) is None


def test_sampling_defaults_come_from_the_gguf_where_it_has_them(tmp_path):
    from gguf_files import write_gguf
    from runtime.gguf.reader import read_file_header
    from runtime.models import load_settings

    meta = {"general.architecture": "llama", "llama.block_count": 1}
    recommended = write_gguf(tmp_path / "recommends.gguf", metadata={**meta, "general.sampling.temp": 0.25, "general.sampling.top_k": 20,
                                                                   "general.sampling.top_p": 0.5}, tensor_elements=10)
    silent = write_gguf(tmp_path / "silent.gguf", metadata=meta, tensor_elements=10)
    assert load_settings.sampling_defaults(read_file_header(recommended)) == {"temperature": 0.25, "top_k": 20, "top_p": 0.5}
    assert load_settings.sampling_defaults(read_file_header(silent)) == {}
