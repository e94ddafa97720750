"""What screen readers and keyboard users need from a widget: a name, a description, a place in the Tab order.

Names are what a screen reader says for a control ("Send"), descriptions what it says next ("Enter
sends; Shift+Enter starts a new line"). Every widget that takes focus has both
(tests/app/ui/test_keyboard_and_accessibility.py walks the window with Tab and checks).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QWidget

from app.ui.language import Context

Accessibility = Context("Accessibility")

W = TypeVar("W", bound=QWidget)


def described(widget: W, name: str, description: str) -> W:
    widget.setAccessibleName(name)
    widget.setAccessibleDescription(description)
    return widget


def describe_buttons(box: QDialogButtonBox) -> QDialogButtonBox:
    """Say what a dialog's standard buttons do (Qt names them, but describes none)."""
    Button = QDialogButtonBox.StandardButton
    descriptions = {
        Button.Ok: Accessibility.tr("Apply the changes and close"),
        Button.Cancel: Accessibility.tr("Close without changing anything"),
        Button.Close: Accessibility.tr("Close this window"),
    }
    for which, description in descriptions.items():
        button = box.button(which)
        if button is not None:
            button.setAccessibleDescription(description)
    return box


def takes_tab_focus(widget: QWidget) -> bool:
    return bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus) and widget.isEnabled() and widget.isVisibleTo(widget.window())


def chain(widgets: Iterable[QWidget]) -> None:
    """Put the widgets in this Tab order (reading order: what was made later would otherwise come last)."""
    previous = None
    for widget in widgets:
        if previous is not None:
            QWidget.setTabOrder(previous, widget)
        previous = widget


def discard(widget: QWidget) -> None:
    """A part of a message that is gone: out of its parent now, so the Tab order (built from a message's children)
    never holds it once Qt has deleted it, which it does as the event loop turns."""
    widget.hide()
    widget.setParent(None)  # type: ignore[call-overload]  # PySide's stubs omit the None overload
    widget.deleteLater()
