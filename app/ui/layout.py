"""How the window's parts are laid out: the conversation list | the banner, the top bar, the chat and the
composer | the metrics panel. The side panes keep their width as the window grows; the chat takes the rest."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QSplitter, QVBoxLayout, QWidget

COMPOSER_WIDTH = 900  # the most the composer grows to: a line of text stays readable on a wide screen
PANE_WIDTHS = (240, 760)  # the conversation list's and the chat's widths in a new window


def center_column(banner: QWidget, top_bar: QWidget, chat_view: QWidget, composer: QWidget) -> QWidget:
    center = QWidget()
    column = QVBoxLayout(center)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(0)
    composer_holder = QWidget()
    composer_row = QHBoxLayout(composer_holder)
    composer_row.setContentsMargins(16, 8, 16, 14)
    composer.setMaximumWidth(COMPOSER_WIDTH)
    composer_row.addWidget(composer)
    column.addWidget(banner)
    column.addWidget(top_bar)
    column.addWidget(chat_view, 1)
    column.addWidget(composer_holder)
    return center


def three_panes(sidebar: QWidget, center: QWidget, panel: QWidget, panel_width: int) -> QSplitter:
    splitter = QSplitter()
    for pane, stretch in ((sidebar, 0), (center, 1), (panel, 0)):
        splitter.addWidget(pane)
        splitter.setStretchFactor(splitter.indexOf(pane), stretch)
    splitter.setSizes([*PANE_WIDTHS, panel_width])
    splitter.setChildrenCollapsible(False)
    splitter.setHandleWidth(1)
    return splitter
