"""`lokal search / quants / pull / models / rm` end to end: the real command, its runtime child, the loopback hub."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from runtime.protocol import methods
from sample_repos import SMOL_REPO, hub_env

pytestmark = pytest.mark.slow


@pytest.fixture
def lokal(hub, tmp_path):
    env = {**os.environ, **hub_env(hub, tmp_path)}

    def run(*args, timeout=180):
        return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=timeout, env=env)

    return run


def test_search_and_catalog(lokal):
    proc = lokal("search", "smollm2")
    assert proc.returncode == 0, proc.stderr
    assert SMOL_REPO in proc.stdout and "500 downloads" in proc.stdout
    proc = lokal("search")
    assert proc.returncode == 0, proc.stderr
    assert "Qwen/Qwen3-4B-GGUF" in proc.stdout and "draft: Qwen/Qwen3-0.6B-GGUF" in proc.stdout
    gemma = next(line for line in proc.stdout.splitlines() if line.startswith("ggml-org/gemma-3-4b-it-GGUF "))
    assert " vision " in gemma


def test_quants_shows_levels_sizes_and_fit(lokal):
    proc = lokal("quants", SMOL_REPO, "--n-ctx", "2048")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "30 layers, 3 KV heads x 64/64" in lines[0]
    q41 = next(line for line in lines if line.strip().startswith("Q4_1"))
    assert "98.4 MB" in q41 and ("fits in RAM" in q41 or "fits on GPU" in q41)
    assert "(2 parts)" in next(line for line in lines if line.strip().startswith("Q8_0"))
    assert "too big" in next(line for line in lines if line.strip().startswith("F32"))


def test_pull_then_models_then_rm(lokal, hub, starter_model):
    proc = lokal("pull", f"{SMOL_REPO}:Q4_1")
    assert proc.returncode == 0, proc.stderr
    path = proc.stdout.strip().splitlines()[-1]
    assert path.endswith("SmolLM2-135M-Instruct-Q4_1.gguf") and os.path.getsize(path) == starter_model.stat().st_size
    assert "100%" in proc.stderr  # the progress bar reached the end

    listed = json.loads(lokal("models", "--json").stdout)["models"]
    [ours] = [m for m in listed if m["repo"] == SMOL_REPO]
    assert ours["path"] == path

    proc = lokal("rm", f"{SMOL_REPO}:Q4_1")
    assert proc.returncode == 0, proc.stderr
    assert "98.4 MB freed" in proc.stdout
    assert not os.path.exists(path)


def test_pull_of_a_vision_model_brings_its_projector_unless_told_not_to(lokal, hub):
    from sample_repos import VISION_FILE, VISION_MMPROJ, VISION_REPO

    proc = lokal("pull", f"{VISION_REPO}:Q4_1", "--no-mmproj")
    assert proc.returncode == 0, proc.stderr
    assert [os.path.basename(p) for p in proc.stdout.strip().splitlines()] == [VISION_FILE]
    proc = lokal("pull", f"{VISION_REPO}:Q4_1")
    assert proc.returncode == 0, proc.stderr
    assert [os.path.basename(p) for p in proc.stdout.strip().splitlines()] == [VISION_FILE, VISION_MMPROJ]
    [model] = [m for m in json.loads(lokal("models", "--json").stdout)["models"] if m["repo"] == VISION_REPO]
    assert os.path.basename(model["mmproj"]) == VISION_MMPROJ


def test_pull_errors_are_clear(lokal):
    proc = lokal("pull", "lokal-test/missing:Q4_K_M")
    assert proc.returncode == 1
    assert "repository not found: lokal-test/missing" in proc.stderr
    proc = lokal("pull", "not-a-repo")
    assert proc.returncode == 1 and "owner/name" in proc.stderr
    proc = lokal("rm", "nothing-like-this")
    assert proc.returncode == 1 and "no local model matches" in proc.stderr


def test_rm_of_a_file_you_added_takes_it_off_the_list_and_deletes_it_only_when_asked(lokal, hub, tmp_path, starter_model):
    from runtime.client import RuntimeClient
    from runtime.protocol import ModelsAddParams

    own = tmp_path / "my models" / "my-model.gguf"
    own.parent.mkdir()
    os.link(starter_model, own) if os.stat(starter_model).st_dev == os.stat(tmp_path).st_dev else own.write_bytes(starter_model.read_bytes())
    checksum = own.with_name(own.name + ".sha256")
    checksum.write_text("the user's own note\n")

    def add() -> str:
        with RuntimeClient(env={**os.environ, **hub_env(hub, tmp_path)}) as client:
            client.initialize("pytest")
            return client.request(methods.MODELS_ADD, ModelsAddParams(str(own)), timeout=60).id

    def listed() -> list[str]:
        return [m["id"] for m in json.loads(lokal("models", "--json").stdout)["models"]]

    model_id = add()
    proc = lokal("rm", str(own))
    assert proc.returncode == 0, proc.stderr
    assert "the file stays" in proc.stdout and "--delete-file" in proc.stdout
    assert own.exists() and checksum.exists()  # the user's file, untouched
    assert model_id not in listed()

    model_id = add()
    proc = lokal("rm", "--delete-file", str(own))
    assert proc.returncode == 0, proc.stderr
    assert not own.exists() and not checksum.exists()
    assert model_id not in listed()


def test_models_remove_of_an_added_file_keeps_it_unless_asked(hub_runtime, tmp_path, starter_model):
    from runtime.protocol import ModelsAddParams, ModelsRemoveParams

    own = tmp_path / "kept.gguf"
    os.link(starter_model, own) if os.stat(starter_model).st_dev == os.stat(tmp_path).st_dev else own.write_bytes(starter_model.read_bytes())
    added = hub_runtime.request(methods.MODELS_ADD, ModelsAddParams(str(own)), timeout=60)
    hub_runtime.request(methods.MODELS_REMOVE, ModelsRemoveParams(added.id), timeout=60)  # no delete_file: only off the list
    assert own.exists()
