"""The bar above the conversation: its title, the model button (which opens the Model menu), the
conversation settings and the metrics panel's toggle.

In a narrow window the title and the model button share what the other buttons leave: the model button gives way
first (its name cut with "…", the quantization kept), down to a few letters of the name, while the title keeps
TITLE_ROOM; the title gets whatever is left above that. Both are whole in their tooltips. Before, the button kept its
whole name (up to 240 px) and the title went down to two letters and "…" at the window's minimum width.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QMenu, QSizePolicy, QToolButton, QWidget

from app.ui import icons
from app.ui.accessibility import described
from app.ui.elided_label import ElidedLabel

MODEL_NAME_WIDTH = 240  # the most the model button's text takes: a longer name is cut with "…", whole in its tooltip
MODEL_NAME_FLOOR = 91  # the least it takes in a narrow window: a few letters of the name and the quantization ("Smol… · Q4_1")
TITLE_ROOM = 140  # the title's width the model button gives way to: a title's first words
QUANTIZATION_MARK = " · "  # between the model's name and its quantization, as the model status writes them


def fit_model_name(name: str, metrics: QFontMetrics, width: int) -> str:
    """The name whole if it fits in `width`; else its beginning and "…" followed by the quantization whole, while a
    letter of the name still fits beside it (which file of a model is loaded matters as much as which model); else
    the beginning of the whole and "…"."""
    if metrics.horizontalAdvance(name) <= width:
        return name
    model, mark, quantization = name.rpartition(QUANTIZATION_MARK)
    if mark:
        tail = mark + quantization
        head = metrics.elidedText(model, Qt.TextElideMode.ElideRight, width - metrics.horizontalAdvance(tail))
        if head.rstrip("…"):
            return head + tail
    return metrics.elidedText(name, Qt.TextElideMode.ElideRight, max(width, 0))


class ModelButton(QToolButton):
    """The model button: the model's name and quantization (or "No model"), cut to the width it gets; a click opens
    the Model menu."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.whole = ""
        self._tip = self.tr("Choose the model and quantization")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, self.sizePolicy().verticalPolicy())  # a QToolButton's is Fixed

    def set_model_name(self, name: str) -> None:
        self.whole = name
        self.setAccessibleName(self.tr("Model: {name}").format(name=name))  # a screen reader reads it whole
        self.updateGeometry()
        bar = self.parentWidget()
        row = bar.layout() if bar is not None else None
        if row is not None and self.isVisible():
            row.activate()  # the width the new name gets now, not once the event loop lays the bar out: cut to that
        self._cut()

    def _around_text(self) -> int:
        """The button's width besides its text: the icon, the padding and the menu's arrow."""
        return super().sizeHint().width() - self.fontMetrics().size(Qt.TextFlag.TextShowMnemonic, self.text()).width()

    def sizeHint(self) -> QSize:
        text = min(self.fontMetrics().horizontalAdvance(self.whole), MODEL_NAME_WIDTH)
        return QSize(self._around_text() + text + 1, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        text = min(self.fontMetrics().horizontalAdvance(self.whole), MODEL_NAME_FLOOR)
        return QSize(self._around_text() + text + 1, super().sizeHint().height())

    def narrowest_for_any_name(self) -> int:
        return self._around_text() + MODEL_NAME_FLOOR + 1

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._cut()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._cut()  # a name set while hidden was cut to MODEL_NAME_WIDTH

    def _cut(self) -> None:
        room = self.width() - self._around_text() - 1 if self.isVisible() else MODEL_NAME_WIDTH
        shown = fit_model_name(self.whole, self.fontMetrics(), min(room, MODEL_NAME_WIDTH))
        label = shown.replace("&", "&&")  # a button reads "&" as its shortcut's mark: "Q&A Model" would show "QA Model"
        if label != self.text():
            self.setText(label)
        self.setToolTip(self._tip if shown == self.whole else f"{self.whole}\n{self._tip}")


class TopBar(QWidget):
    def __init__(self, model_menu: QMenu, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("topBar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(self)
        row.setContentsMargins(16, 8, 10, 8)
        self.title = ElidedLabel(self.tr("New chat"), whole_in_tooltip=True, keeps=TITLE_ROOM)
        self.title.setObjectName("title")
        self.model_button = ModelButton()
        self.model_button.setObjectName("modelButton")
        self.model_button.setIcon(icons.icon("model"))
        self.model_button.set_model_name(self.tr("No model"))
        self.model_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.model_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.model_button.setAccessibleDescription(self.tr("Choose the model and quantization (Alt+M opens the Model menu)"))
        self.model_button.setMenu(model_menu)
        self.settings_button = QToolButton()
        self.settings_button.setIcon(icons.icon("settings"))
        self.settings_button.setAutoRaise(True)
        self.settings_button.setToolTip(self.tr("Conversation settings (Ctrl+,)"))
        described(self.settings_button, self.tr("Conversation settings"), self.tr("System prompt, sampling and context size of this conversation"))
        self.metrics_button = QToolButton()
        self.metrics_button.setIcon(icons.icon("metrics"))
        self.metrics_button.setAutoRaise(True)
        self.metrics_button.setCheckable(True)
        self.metrics_button.setChecked(True)
        self.metrics_button.setToolTip(self.tr("Show the metrics panel (Ctrl+Shift+M)"))
        described(self.metrics_button, self.tr("Metrics panel"), self.tr("Show or hide the speed and memory figures"))
        for button in (self.model_button, self.settings_button, self.metrics_button):
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        row.addWidget(self.title, 1)
        row.addWidget(self.model_button)
        row.addWidget(self.settings_button)
        row.addWidget(self.metrics_button)

    def minimumSizeHint(self) -> QSize:
        """The same whatever the title and the model's name (the window's minimum width follows it, and should not
        jump as another conversation is opened): room for TITLE_ROOM of the title and MODEL_NAME_FLOOR of the name."""
        hint = super().minimumSizeHint()
        short_by = (TITLE_ROOM - self.title.minimumSizeHint().width()) + (
            self.model_button.narrowest_for_any_name() - self.model_button.minimumSizeHint().width())
        return QSize(hint.width() + short_by, hint.height())
