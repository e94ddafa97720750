"""The message box: Enter sends, Shift+Enter starts a new line, Esc stops the reply."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPlainTextEdit, QSizePolicy, QToolButton, QWidget

from app.ui import icons
from app.ui.accessibility import described

MAX_LINES = 8


class ComposerEdit(QPlainTextEdit):
    sig_submit = Signal()
    sig_escape = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.sig_submit.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.sig_escape.emit()
            return
        super().keyPressEvent(event)


class Composer(QFrame):
    sig_send = Signal(str)
    sig_stop = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composerFrame")
        self.generating = False
        self.can_send = True
        self._reason = ""
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        self.edit = ComposerEdit()
        self.edit.setObjectName("composer")
        self.edit.setTabChangesFocus(True)  # Tab moves on, as everywhere else in the window
        self.edit.setPlaceholderText(self.tr("Message the model  (Enter to send, Shift+Enter for a new line)"))
        described(self.edit, self.tr("Message"), self.tr("Enter sends; Shift+Enter starts a new line; Esc stops the reply"))
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.edit.sig_submit.connect(self._on_submit)
        self.edit.sig_escape.connect(self.sig_stop)
        self.edit.textChanged.connect(self._update_button)
        self.button = QToolButton()
        self.button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.button.setIconSize(QSize(20, 20))
        self.button.setAutoRaise(True)
        self.button.clicked.connect(self._on_button)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        self._fit()
        self._update_button()

    def text(self) -> str:
        return self.edit.toPlainText()

    def set_generating(self, generating: bool) -> None:
        self.generating = generating
        self._update_button()

    def set_can_send(self, can_send: bool, reason: str = "") -> None:
        """No model (yet): the box stays editable, sending waits; the button says why."""
        self.can_send = can_send
        self._reason = reason
        self._update_button()

    def _update_button(self) -> None:
        if self.generating:
            self.button.setIcon(icons.icon("stop"))
            self.button.setToolTip(self.tr("Stop (Esc)"))
            described(self.button, self.tr("Stop"), self.tr("Stop the reply; the text so far is kept"))
            self.button.setEnabled(True)
        else:
            self.button.setIcon(icons.icon("send"))
            ready = self.can_send and bool(self.text().strip())
            self.button.setEnabled(ready)
            self.button.setToolTip(self.tr("Send (Enter)") if self.can_send else self._reason)
            described(self.button, self.tr("Send"), self.tr("Send the message") if self.can_send else self._reason)

    def _on_button(self) -> None:
        if self.generating:
            self.sig_stop.emit()
        else:
            self._on_submit()

    def _on_submit(self) -> None:
        text = self.text().strip()
        if not text or self.generating or not self.can_send:
            return
        self.sig_send.emit(text)  # the window calls sent() once the message is safely stored

    def sent(self) -> None:
        """The message went out: clear the box. Until then the text stays, so a failed save loses nothing."""
        self.edit.clear()

    def _fit(self, *_args: object) -> None:
        line = self.edit.fontMetrics().lineSpacing()
        lines = min(max(int(self.edit.document().size().height()), 1), MAX_LINES)
        self.edit.setFixedHeight(lines * line + 12)
