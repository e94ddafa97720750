"""What the window keeps between starts: its geometry, the splitter's sizes and the metrics panel's
visibility go into the real store when it closes and come back when it opens."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QSplitter, QWidget

from app.storage import Store
from app.ui.window_state import restore_layout, save_layout


def window_with_splitter() -> tuple[QWidget, QSplitter]:
    window = QWidget()
    splitter = QSplitter(window)
    for text in ("conversations", "chat", "metrics"):
        splitter.addWidget(QLabel(text))
    splitter.setChildrenCollapsible(False)
    window.resize(900, 500)
    splitter.resize(900, 500)
    return window, splitter


def test_a_first_start_restores_nothing_and_shows_the_metrics_panel(qtbot, tmp_path):
    store = Store(tmp_path / "conversations.sqlite3")
    window, splitter = window_with_splitter()
    qtbot.addWidget(window)
    sizes = splitter.sizes()
    assert restore_layout(store, window, splitter) is True
    assert splitter.sizes() == sizes


def test_the_layout_saved_at_close_comes_back_at_the_next_start(qtbot, tmp_path):
    path = tmp_path / "conversations.sqlite3"
    window, splitter = window_with_splitter()
    qtbot.addWidget(window)
    splitter.setSizes([200, 500, 200])
    saved_sizes = splitter.sizes()
    store = Store(path)
    save_layout(store, window, splitter, metrics_visible=False)
    store.close()

    again, again_splitter = window_with_splitter()
    qtbot.addWidget(again)
    assert again_splitter.sizes() != saved_sizes
    assert restore_layout(Store(path), again, again_splitter) is False
    assert again_splitter.sizes() == saved_sizes
