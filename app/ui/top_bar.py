"""The bar above the conversation: its title, the model button (which opens the Model menu), the
conversation settings and the metrics panel's toggle."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QToolButton, QWidget

from app.ui import icons
from app.ui.accessibility import described


class TopBar(QWidget):
    def __init__(self, model_menu: QMenu, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("topBar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(self)
        row.setContentsMargins(16, 8, 10, 8)
        self.title = QLabel(self.tr("New chat"))
        self.title.setObjectName("title")
        self.model_button = QToolButton()
        self.model_button.setObjectName("modelButton")
        self.model_button.setIcon(icons.icon("model"))
        self.model_button.setText(self.tr("No model"))
        self.model_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.model_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.model_button.setToolTip(self.tr("Choose the model and quantization"))
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
