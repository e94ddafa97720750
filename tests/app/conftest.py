"""Fixtures: the real window over the real runtime process and the starter model, offscreen."""

from __future__ import annotations

import pytest

from window_helpers import open_window


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "conversations.sqlite3"


@pytest.fixture
def window(qtbot, store_path, starter_model):
    win = open_window(qtbot, store_path, starter_model)
    yield win
    win.shutdown()
