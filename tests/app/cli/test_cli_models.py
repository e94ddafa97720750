"""`lokal search / quants / pull / models / rm` end to end: the real command, its runtime child, the loopback hub."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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
    assert "Qwen/Qwen2.5-1.5B-Instruct-GGUF" in proc.stdout and "draft: Qwen/Qwen2.5-0.5B-Instruct-GGUF" in proc.stdout


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


def test_pull_errors_are_clear(lokal):
    proc = lokal("pull", "lokal-test/missing:Q4_K_M")
    assert proc.returncode == 1
    assert "repository not found: lokal-test/missing" in proc.stderr
    proc = lokal("pull", "not-a-repo")
    assert proc.returncode == 1 and "owner/name" in proc.stderr
    proc = lokal("rm", "nothing-like-this")
    assert proc.returncode == 1 and "no local model matches" in proc.stderr
