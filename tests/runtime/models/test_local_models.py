"""Local models: the Hugging Face cache (split models as one entry), deletion that leaves the cache tidy."""

from __future__ import annotations

from gguf_files import write_gguf
from runtime.gguf.reader import read_file_header
from runtime.hub.downloads import DownloadManager
from runtime.models import local
from runtime.protocol import DownloadStartParams
from sample_repos import SMOL_FILE, SMOL_REPO
from download_recorder import Recorder


def test_split_model_is_one_entry_and_deleting_it_removes_blobs_and_folders(hub, tmp_path):
    recorder = Recorder()
    cache = tmp_path / "hf"
    m = DownloadManager(recorder, cache_dir=cache, state_dir=tmp_path / "state")
    try:
        a = m.start(DownloadStartParams(SMOL_REPO, "Q8_0"))
        b = m.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
        assert recorder.wait(a.id).state == "done" and recorder.wait(b.id).state == "done"
    finally:
        m.close()
    ours = {x.id: x for x in local.list_models(cache) if x.source == "hf_cache"}
    split_id = f"hf:{SMOL_REPO}/SmolLM2-135M-Instruct-Q8_0-00001-of-00002.gguf"
    assert set(ours) == {split_id, f"hf:{SMOL_REPO}/{SMOL_FILE}"}
    split = ours[split_id]
    assert len(split.files) == 2 and split.problem is None
    assert split.size == ours[f"hf:{SMOL_REPO}/{SMOL_FILE}"].size  # the two shards add up to the file they were cut from

    repo_dir = cache / "models--lokal-test--SmolLM2-135M-Instruct-GGUF"
    removed, freed = local.remove(split_id, cache=cache)
    assert removed and freed == split.size
    assert len(list((repo_dir / "blobs").iterdir())) == 1  # the Q4_1 blob stays
    local.remove(f"hf:{SMOL_REPO}/{SMOL_FILE}", cache=cache)
    assert not repo_dir.exists()  # nothing left: the repository folder goes too
    assert not [x for x in local.list_models(cache) if x.source == "hf_cache"]


def test_a_missing_shard_is_reported(hub, tmp_path):
    recorder = Recorder()
    cache = tmp_path / "hf"
    m = DownloadManager(recorder, cache_dir=cache, state_dir=tmp_path / "state")
    try:
        info = m.start(DownloadStartParams(SMOL_REPO, files=["SmolLM2-135M-Instruct-Q8_0-00001-of-00002.gguf"]))
        assert recorder.wait(info.id).state == "done"
    finally:
        m.close()
    [split] = [x for x in local.list_models(cache) if x.source == "hf_cache"]
    assert split.problem == "1 of 2 parts are present"


def test_pulling_again_after_deleting_downloads_again(hub, tmp_path):
    recorder = Recorder()
    cache = tmp_path / "hf"
    m = DownloadManager(recorder, cache_dir=cache, state_dir=tmp_path / "state")
    try:
        first = m.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
        assert recorder.wait(first.id).state == "done"
        assert m.start(DownloadStartParams(SMOL_REPO, "Q4_1")).id == first.id  # already there: nothing to do
        local.remove(f"hf:{SMOL_REPO}/{SMOL_FILE}", cache=cache)
        again = m.start(DownloadStartParams(SMOL_REPO, "Q4_1"))
        assert again.id != first.id
        done = recorder.wait(again.id)
        assert done.state == "done" and all(p for p in done.paths)
        assert [d.id for d in m.list()] == [again.id]
    finally:
        m.close()


def test_projector_for_names_the_projector_the_list_names(tmp_path):
    """The window works a load out before the list comes with local.projector_for: it must say what the list says
    (the files need not be models for that: the pairing goes by where they lie)."""
    cache = tmp_path / "hub"
    snapshot = cache / "models--someone--vision-model" / "snapshots" / ("0" * 40)
    text_only = cache / "models--someone--text-model" / "snapshots" / ("1" * 40)
    own = tmp_path / "my-models"
    for folder, names in ((snapshot, ["model-Q4_1.gguf", "mmproj-model-f16.gguf"]), (text_only, ["model-Q8_0.gguf"]), (own, ["model.gguf", "mmproj-model-f16.gguf"])):
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_bytes(b"GGUF" + name.encode())
    listed = {m.path: m.mmproj for m in local.list_models(cache)}  # with the models folder's: none of them pairs
    assert {p: m for p, m in listed.items() if p.startswith(str(cache))} == {
        str(snapshot / "model-Q4_1.gguf"): str(snapshot / "mmproj-model-f16.gguf"), str(text_only / "model-Q8_0.gguf"): None}
    assert all(local.projector_for(path, cache) == mmproj for path, mmproj in listed.items())
    assert local.projector_for(str(own / "model.gguf"), cache) is None  # a folder of the user's pairs nothing (models.add: mmproj None)
    assert local.projector_for(str(snapshot / "mmproj-model-f16.gguf"), cache) is None  # a projector has none


def test_removing_a_vision_model_removes_its_projector_once_no_other_level_uses_it(tmp_path):
    """`lokal rm` of a vision level left its projector behind (hundreds of MB); two levels of a repository share one."""
    cache = tmp_path / "hub"
    snapshot = cache / "models--someone--vision-model" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    for name in ("model-Q4_1.gguf", "model-Q8_0.gguf", "mmproj-model-f16.gguf"):
        (snapshot / name).write_bytes(b"GGUF" + name.encode() * 100)
    projector = snapshot / "mmproj-model-f16.gguf"
    by_path = {m.path: m for m in local.list_models(cache)}
    q4, q8 = by_path[str(snapshot / "model-Q4_1.gguf")], by_path[str(snapshot / "model-Q8_0.gguf")]
    assert q4.mmproj == q8.mmproj == str(projector)
    removed, freed = local.remove(q4.id, cache=cache)
    assert removed and freed == len(b"GGUF" + b"model-Q4_1.gguf" * 100)
    assert projector.exists(), "the other level still uses the projector"
    removed, freed = local.remove(q8.id, cache=cache)
    assert removed and freed == len(b"GGUF" + b"model-Q8_0.gguf" * 100) + len(b"GGUF" + b"mmproj-model-f16.gguf" * 100)
    assert not projector.exists() and not (cache / "models--someone--vision-model").exists()


def test_a_model_is_named_as_its_file_spells_it_when_the_header_writes_it_in_lower_case(tmp_path):
    """A converter wrote `general.basename` "smollm2" and a training run's tag as the fine-tune: the menu says
    "SmolLM2 135M Instruct", as the file does, not "Smollm2 135M"; a header that spells its name is kept."""
    lower = {"general.architecture": "llama", "general.basename": "smollm2", "general.size_label": "135M", "general.finetune": "8k-lc100k-mix1-ep2"}
    path = write_gguf(tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf", metadata=lower, tensor_elements=100)
    assert local.group_name(read_file_header(path), path) == "SmolLM2 135M Instruct"
    path = write_gguf(tmp_path / "model-q4_k_m.gguf", metadata=lower, tensor_elements=100)
    assert local.group_name(read_file_header(path), path) == "Smollm2 135M"  # nothing to take the case from
    spelled = {**lower, "general.basename": "Tiny-Llama", "general.finetune": "Chat"}
    path = write_gguf(tmp_path / "tinyllama-instruct.gguf", metadata=spelled, tensor_elements=100)
    assert local.group_name(read_file_header(path), path) == "Tiny Llama 135M Chat"
    two_words = {**lower, "general.basename": "tiny-llama"}
    path = write_gguf(tmp_path / "Tiny_Llama-135M.gguf", metadata=two_words, tensor_elements=100)
    assert local.group_name(read_file_header(path), path) == "Tiny Llama 135M"
