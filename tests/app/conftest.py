"""Fixtures: the real window over the real runtime process and the starter model, offscreen."""

from __future__ import annotations

import pytest

from window_helpers import close_shared_window, open_shared_window, open_window


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


@pytest.fixture
def english(qapp):
    """The window's strings in English (the source language, with its plural forms from lokal_en.qm)."""
    from app.ui import language

    assert language.install("en") == "en"
    yield


@pytest.fixture
def indonesian(qapp):
    """The window's strings in Indonesian for one test, English again after it."""
    from app.ui import language

    assert language.install("id") == "id"
    yield
    language.install("en")


@pytest.fixture(scope="module")
def module_window(qapp, starter_model, tmp_path_factory):
    """One real window (its runtime, the starter model loaded) for every test of a module: tests leave it as they found it."""
    folder = tmp_path_factory.mktemp("window")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_CACHE", str(folder / "hf-cache"))
        window = open_shared_window(folder / "conversations.sqlite3", starter_model)
        yield window
        close_shared_window(window)
