"""The side panes give way before the chat goes under CHAT_ROOM as the window narrows, and get their width back
first as it widens; a width the user drags a pane to is the one kept, across starts too (app/ui/layout.ThreePanes)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from app.storage import Store
from app.ui.layout import CHAT_ROOM, ThreePanes
from app.ui.window_state import restore_layout, save_layout

LOWS = (200, 250)  # the side panes' own minimum widths, as the window's are


def settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def pane(text: str, low: int) -> QLabel:
    label = QLabel(text)
    label.setMinimumWidth(low)
    return label


@pytest.fixture
def panes(qtbot):
    splitter = ThreePanes(pane("conversations", LOWS[0]), pane("chat", 360), pane("metrics", LOWS[1]), 300)
    qtbot.addWidget(splitter)
    splitter.resize(1358, 700)
    splitter.show()
    qtbot.waitExposed(splitter)
    settle()
    return splitter


def width_to(splitter: ThreePanes, width: int) -> list[int]:
    splitter.resize(width, 700)
    settle()
    return splitter.sizes()


def test_the_side_panes_give_way_before_the_chat_narrows_and_come_back_first(panes):
    wide = width_to(panes, 1358)
    assert [wide[0], wide[2]] == [240, 300]
    side, chat, panel = width_to(panes, 958)  # a window snapped to half a 1920 px screen
    assert chat == 958 - 2 - 450 > 418  # QSplitter alone gave the chat 418 and kept 240 and 300 beside it
    assert (side, panel) == LOWS
    side, chat, panel = width_to(panes, 1098)
    assert chat == CHAT_ROOM and LOWS[0] < side < 240 and LOWS[1] < panel < 300  # each gives in proportion to what it has spare
    assert width_to(panes, 1358) == wide


def test_a_width_the_user_drags_a_pane_to_is_the_one_it_comes_back_to(panes):
    panes.moveSplitter(320, 1)  # as a drag of the first handle does (it emits splitterMoved)
    settle()
    assert panes.chosen == [320, 300]
    width_to(panes, 958)
    assert width_to(panes, 1358)[0] == 320


def test_a_panel_shown_again_in_a_narrow_window_takes_room_from_the_panes_first(panes, qtbot):
    width_to(panes, 1058)
    metrics = panes.widget(2)
    metrics.hide()
    qtbot.waitUntil(lambda: panes.sizes()[2] == 0)
    assert panes.sizes()[1] == 1058 - 2 - 240 + 1  # the chat has the panel's room (a hidden pane's handle too)
    metrics.show()
    qtbot.waitUntil(lambda: panes.sizes()[1] == CHAT_ROOM)


def test_the_widths_chosen_come_back_at_the_next_start_even_when_the_window_closed_narrow(panes, qtbot, tmp_path):
    panes.moveSplitter(320, 1)
    settle()
    width_to(panes, 958)
    window = QWidget()
    qtbot.addWidget(window)
    store = Store(tmp_path / "c.sqlite3")
    save_layout(store, window, panes, metrics_visible=True)
    again = ThreePanes(pane("conversations", LOWS[0]), pane("chat", 360), pane("metrics", LOWS[1]), 300)
    qtbot.addWidget(again)
    again.resize(958, 700)
    again.show()
    restore_layout(store, window, again)
    assert again.chosen == [320, 300]
    assert width_to(again, 1358)[::2] == [320, 300]
