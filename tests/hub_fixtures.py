"""Fixtures: a loopback hub with real GGUF files, and an isolated Hugging Face home for each test
(a plugin of tests/conftest.py, for the runtime's hub tests and the app's catalog and CLI tests).

huggingface_hub is pointed at the loopback hub through HF_ENDPOINT (read by
Lokal at call time, and by a runtime process at start); the cache, the token
and Lokal's own data live in the test's temporary directory, so no test sees
the user's files or contacts the real hub.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fake_hub import FakeHub
from sample_repos import Notes, hub_env, make_repos


@pytest.fixture(scope="session")
def giant_gguf(tmp_path_factory) -> Path:
    """A sparse GGUF that declares 400 GB of weights: costs no disk, fits no machine."""
    from gguf_files import write_gguf

    path = tmp_path_factory.mktemp("giant") / "giant.gguf"
    return write_gguf(path, metadata={"general.architecture": "llama", "llama.block_count": 80, "llama.embedding_length": 8192, "llama.attention.head_count": 64}, tensor_elements=100 * 2**30)


@pytest.fixture(scope="session")
def _repos(starter_model, giant_gguf, tmp_path_factory):
    from gguf_files import write_draft_pair, write_projectors

    repos = make_repos(starter_model, giant_gguf, write_draft_pair(tmp_path_factory.mktemp("draft-pair")), write_projectors(tmp_path_factory.mktemp("projectors")))
    for repo in repos.values():  # hash once per session, not per test
        for f in repo.files.values():
            if f.lfs:
                f.sha256
    return repos


@pytest.fixture
def hub(_repos, tmp_path, monkeypatch):
    """The loopback hub, with this process's huggingface settings pointing at it."""
    import copy

    repos = {rid: copy.deepcopy(r) for rid, r in _repos.items()}
    with FakeHub(repos) as server:
        for key, value in hub_env(server, tmp_path).items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield server


@pytest.fixture
def hub_runtime(hub, tmp_path):
    """A real runtime process that talks to the loopback hub; collects its notifications."""
    from runtime.client import RuntimeClient

    notes = Notes()
    env = {**os.environ, **hub_env(hub, tmp_path)}
    env.pop("HF_TOKEN", None)
    client = RuntimeClient(env=env, on_notification=notes)
    client.initialize("pytest-hub")
    client.notes = notes
    yield client
    client.close()
