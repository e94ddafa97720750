"""How the window's parts are laid out: the conversation list | the banner, the top bar, the chat and the
composer | the metrics panel (ThreePanes: how the width is shared)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QEvent, QObject, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QVBoxLayout, QWidget

COMPOSER_WIDTH = 900  # the most the composer grows to: a line of text stays readable on a wide screen
PANE_WIDTHS = (240, 760)  # the conversation list's and the chat's widths in a new window
CHAT_ROOM = 560  # the chat's width the side panes give way to as the window narrows: about 70 characters a line


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


class ThreePanes(QSplitter):
    """The conversation list | the chat | the metrics panel. The side panes keep the widths the user gave them
    (`chosen`: by dragging a handle, or from the last session) as the window grows, and the chat takes the rest. As
    the window narrows, they give way before the chat goes under CHAT_ROOM, in proportion to what each has above its
    own minimum, and get it back first as the window widens. Left to QSplitter, the chat alone gave way: 418 px of a
    window snapped to half a 1920 px screen went to it, and 540 to the panes beside it."""

    def __init__(self, sidebar: QWidget, center: QWidget, panel: QWidget, panel_width: int):
        super().__init__()
        self._side_panes = (sidebar, panel)
        for pane, stretch in ((sidebar, 0), (center, 1), (panel, 0)):
            self.addWidget(pane)
            self.setStretchFactor(self.indexOf(pane), stretch)
        self.chosen = [PANE_WIDTHS[0], panel_width]  # the side panes' widths, as the user left them
        self.setSizes([PANE_WIDTHS[0], PANE_WIDTHS[1], panel_width])
        self.setChildrenCollapsible(False)
        self.setHandleWidth(1)
        self.splitterMoved.connect(self._on_moved)
        for pane in self._side_panes:
            pane.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Show, QEvent.Type.Hide) and watched in self._side_panes:
            QTimer.singleShot(0, self, self.fit)  # a pane shown or hidden (View ▸ Metrics panel): once QSplitter has made room
        return super().eventFilter(watched, event)

    def _on_moved(self, _position: int, _handle: int) -> None:
        """The user dragged a handle: the side panes' widths now are the ones to keep (a hidden pane's are kept)."""
        sizes = self.sizes()
        self.chosen = [size if not pane.isHidden() else chosen for pane, size, chosen in zip(self._side_panes, (sizes[0], sizes[2]), self.chosen)]

    def restoreState(self, state: QByteArray | bytes | bytearray | memoryview) -> bool:
        restored = super().restoreState(state)
        if restored:
            sizes = self.sizes()
            self.chosen = [size or chosen for size, chosen in zip((sizes[0], sizes[2]), self.chosen)]
        return restored

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()

    def fit(self) -> None:
        """Sizes from the chosen widths and the width there is (see the class)."""
        sizes = self.sizes()
        total = sum(sizes)
        if total <= 0:
            return
        shown = [not pane.isHidden() for pane in self._side_panes]
        lows = [narrowest(pane) if visible else 0 for pane, visible in zip(self._side_panes, shown)]
        sides = [max(chosen, low) if visible else 0 for chosen, low, visible in zip(self.chosen, lows, shown)]
        short = CHAT_ROOM - (total - sum(sides))
        spare = [side - low for side, low in zip(sides, lows)]
        if short > 0 and sum(spare) > 0:
            give = min(short, sum(spare))
            taken = [give * each // sum(spare) for each in spare]
            taken[0] += give - sum(taken)  # what rounding left over
            sides = [side - each for side, each in zip(sides, taken)]
        wanted = [sides[0], total - sides[0] - sides[1], sides[1]]
        if wanted != sizes:
            self.setSizes(wanted)


def narrowest(pane: QWidget) -> int:
    """How narrow QSplitter lets a pane be: its minimum width where it has one, else its minimum size hint's."""
    return pane.minimumWidth() or pane.minimumSizeHint().width()

