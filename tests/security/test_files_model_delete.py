"""Deleting a model deletes that model: file names are not patterns, and a download in progress stays.

The files are real (a Hugging Face cache laid out as huggingface_hub and runtime/hub lay it out, with
relative links from snapshots/ to blobs/); the download in progress is a second process that holds
the blob's lock in the cache's .locks/, as runtime/hub/downloads.py and huggingface_hub do.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from runtime.models import local

REPO = "org/model"
COMMIT = "0" * 40


def repo_dir(cache: Path) -> Path:
    return cache / f"models--{REPO.replace('/', '--')}"


def add_file(cache: Path, name: str, content: bytes) -> Path:
    """A complete file: its blob, named by its sha256, and a relative link to it from the snapshot."""
    blobs = repo_dir(cache) / "blobs"
    snapshot = repo_dir(cache) / "snapshots" / COMMIT
    blobs.mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    blob = blobs / hashlib.sha256(content).hexdigest()
    blob.write_bytes(content)
    (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    return blob


def hold_lock(lock_path: Path) -> subprocess.Popen:
    """Another process holding a blob's download lock until its stdin closes."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire(); "
         "print('held', flush=True); sys.stdin.read()", str(lock_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_name_with_brackets_deletes_itself_and_nothing_else(tmp_path):
    cache = tmp_path / "hf"
    own_blob = add_file(cache, "model-[Q4].gguf", b"the model with brackets")
    other_blob = add_file(cache, "model-Q.gguf", b"another model, whose name [Q4] matches as a pattern")
    snapshot = repo_dir(cache) / "snapshots" / COMMIT

    removed, freed = local.remove(f"hf:{REPO}/model-[Q4].gguf", cache=cache)

    assert removed and freed == len(b"the model with brackets")
    assert not (snapshot / "model-[Q4].gguf").is_symlink() and not own_blob.exists()
    assert (snapshot / "model-Q.gguf").is_symlink() and other_blob.exists()  # before: this one went instead


def test_a_split_model_with_brackets_is_listed_and_deleted_whole(tmp_path, monkeypatch):
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setenv("LOKAL_MODELS_DIR", str(folder))
    parts = [folder / f"model-[v2]-0000{i}-of-00002.gguf" for i in (1, 2)]
    for part in parts:
        part.write_bytes(b"part")
    lookalike = folder / "model-v-00002-of-00002.gguf"  # what `model-[v2]-*-of-00002.gguf` matches as a pattern
    lookalike.write_bytes(b"someone else's")

    [model] = [m for m in local.list_models(tmp_path / "no-hf-cache") if m.path == str(parts[0])]
    assert sorted(model.files) == [str(p) for p in parts]
    local.remove(model.id, cache=tmp_path / "no-hf-cache")
    assert not any(p.exists() for p in parts) and lookalike.exists()


def test_a_download_in_progress_in_another_process_survives_the_cleanup(tmp_path):
    cache = tmp_path / "hf"
    done_blob = add_file(cache, "small.gguf", b"a finished model")
    partial = repo_dir(cache) / "blobs" / ("ab" * 32 + ".incomplete")  # another file of the repo, still arriving
    partial.write_bytes(b"the first bytes")
    holder = hold_lock(cache / ".locks" / repo_dir(cache).name / ("ab" * 32 + ".lock"))
    try:
        local.remove(f"hf:{REPO}/small.gguf", cache=cache)
        assert not done_blob.exists()
        assert partial.exists() and partial.read_bytes() == b"the first bytes"  # before: rmtree took the whole folder
    finally:
        holder.stdin.close()
        holder.wait(30)


def test_a_blob_whose_download_lock_is_held_is_not_deleted(tmp_path):
    cache = tmp_path / "hf"
    blob = add_file(cache, "small.gguf", b"being verified by another process")
    holder = hold_lock(cache / ".locks" / repo_dir(cache).name / (blob.name + ".lock"))
    try:
        removed, freed = local.remove(f"hf:{REPO}/small.gguf", cache=cache)
        assert removed and freed == 0 and blob.exists()
    finally:
        holder.stdin.close()
        holder.wait(30)
