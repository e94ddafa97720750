"""Fixtures: the real window over the real runtime process and the starter model, offscreen."""

from __future__ import annotations

import pytest

from window_helpers import open_window


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "conversations.sqlite3"


@pytest.fixture(autouse=True)
def _own_hugging_face_cache(tmp_path, monkeypatch):
    """The model scan also looks in the Hugging Face cache: an empty one here, not the machine's."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))


@pytest.fixture
def window(qtbot, store_path, starter_model):
    win = open_window(qtbot, store_path, starter_model)
    yield win
    win.shutdown()
