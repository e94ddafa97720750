"""A conversation opened is laid out once, at the width it keeps: the chat's scroll bar is on before its messages show.

Opened with no scroll bar showing, a conversation taller than the chat was laid out at the chat's full width, then
again, each of its text views, when the bar appeared and took its width from them: 430 layouts for the 215 views of
a long reply (bench/long_reply.py), wherever the column is narrower than its maximum. So while a conversation opens
the bar is on, and once its messages are shown (and so laid out), it shows as needed again: it stays where they
overflow. All of it before the window next paints, so a conversation that needs no bar never shows one.

Messages that overflow by less than the chat's height might fit without the bar, at the wider width: those are laid
out again at it, and the bar then shows as Qt decides from there, as it did before. Only a taller conversation keeps
the bar unasked, and one that long does not lose a window's height to the bar's few pixels of width.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtWidgets import QScrollArea

# A layout takes its children's new sizes when its widget's LayoutRequest comes, which posts one to the widget above:
# a pass per level of widgets with layouts. A code block in a reply's thinking is six levels below the chat's
# viewport. Where more were pending, the decision below would be made on sizes not yet final, and Qt then corrects
# it as it did before: the bar shows as needed, and the views are laid out again.
LAYOUT_PASSES = 10


class ScrollBarFirst:
    def __init__(self, area: QScrollArea):
        self._area = area

    @contextmanager
    def opening(self, has_messages: bool) -> Iterator[None]:
        """Around showing the messages of a conversation opened in the area: they must be shown by the block's end."""
        if not has_messages or not self._area.isVisible():  # an area not shown lays them out when it shows
            yield
            return
        self._set(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        try:
            yield
        finally:
            self._settle()

    def _settle(self) -> None:
        overflow = self._scroll_range()
        if 0 < overflow < self._area.viewport().height():
            self._set(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # laid out at the full width, to see whether they fit
            self._scroll_range()
        self._set(Qt.ScrollBarPolicy.ScrollBarAsNeeded)

    def _scroll_range(self) -> int:
        """The area's scroll range, set now from its content's size, as the event loop would set it a few turns on."""
        for _ in range(LAYOUT_PASSES):
            QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QCoreApplication.sendEvent(self._area, QEvent(QEvent.Type.LayoutRequest))  # QScrollArea sets its range
        return self._area.verticalScrollBar().maximum()

    def _set(self, policy: Qt.ScrollBarPolicy) -> None:
        if self._area.verticalScrollBarPolicy() != policy:
            self._area.setVerticalScrollBarPolicy(policy)
