"""GGUF files the user drops on the window (or picks in the file dialog) are checked, remembered, listed and loaded."""

from __future__ import annotations

import os
import shutil

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from window_helpers import open_window, wait_loaded

pytestmark = pytest.mark.slow


def drop(window, path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    assert window.model_file_drop.eventFilter(window, event) == str(path).lower().endswith(".gguf")  # Qt delivers a drop only inside a real drag


def test_a_dropped_gguf_is_added_listed_and_loaded(qtbot, store_path, starter_model, tmp_path):
    elsewhere = tmp_path / "my models" / "smol copy.gguf"
    elsewhere.parent.mkdir()
    try:
        os.link(starter_model, elsewhere)  # a path of its own without copying 100 MB (a symlink would resolve to the original)
    except OSError:
        shutil.copyfile(starter_model, elsewhere)
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        drop(window, elsewhere)
        # dropped while the runtime may still be starting: it is added once the runtime is ready
        qtbot.waitUntil(lambda: window.session.wanted is not None and window.session.wanted.path == str(elsewhere.resolve()), timeout=60_000)
        wait_loaded(qtbot, window)
        qtbot.waitUntil(lambda: window.local_models.file_for(str(elsewhere)) is not None, timeout=60_000)
        window.model_menu.rebuild()
        assert any(a.data() and os.path.realpath(a.data()) == os.path.realpath(elsewhere) for a in window.model_menu.actions())
    finally:
        window.shutdown()


def test_a_dropped_file_that_is_not_gguf_is_refused_plainly(qtbot, window, tmp_path):
    fake = tmp_path / "notes.gguf"
    fake.write_text("not a model\n")
    loaded_before = window.session.loaded
    drop(window, fake)
    qtbot.waitUntil(lambda: not window.banner.isHidden() and "not a usable GGUF model" in window.banner_text.text(), timeout=30_000)
    assert window.session.loaded == loaded_before  # the model in use stays


def test_the_model_menu_offers_the_hugging_face_browser_and_downloads(qtbot, window):
    window.model_menu.rebuild()
    texts = [a.text() for a in window.model_menu.actions()]
    assert "Browse Hugging Face models…" in texts and "Downloads" in texts
    dialog = window.catalog.open_browser()
    assert dialog.isVisible()
    dock = window.catalog.show_downloads()
    assert dock.isVisible()
