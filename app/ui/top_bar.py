"""The bar above the conversation: its title, the model button (which opens the Model menu), the
conversation settings and the metrics panel's toggle."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QMenu, QToolButton, QWidget

from app.ui import icons
from app.ui.accessibility import described
from app.ui.elided_label import ElidedLabel

MODEL_NAME_WIDTH = 240  # the most the model button's text takes: a longer name is cut with "…", whole in its tooltip


class ModelButton(QToolButton):
    """The model button: the model's name and quantization (or "No model"); a click opens the Model menu."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._tip = self.tr("Choose the model and quantization")

    def set_model_name(self, name: str) -> None:
        shown = self.fontMetrics().elidedText(name, Qt.TextElideMode.ElideRight, MODEL_NAME_WIDTH)
        self.setText(shown)
        self.setToolTip(self._tip if shown == name else f"{name}\n{self._tip}")


class TopBar(QWidget):
    def __init__(self, model_menu: QMenu, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("topBar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(self)
        row.setContentsMargins(16, 8, 10, 8)
        self.title = ElidedLabel(self.tr("New chat"), whole_in_tooltip=True)
        self.title.setObjectName("title")
        self.model_button = ModelButton()
        self.model_button.setObjectName("modelButton")
        self.model_button.setIcon(icons.icon("model"))
        self.model_button.set_model_name(self.tr("No model"))
        self.model_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.model_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        described(self.model_button, self.tr("Model"), self.tr("Choose the model and quantization (Alt+M opens the Model menu)"))
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
