"""The conversation, one widget per message, kept in step with a MessageListModel.

It follows the bottom while a reply streams only if the user was already at
the bottom: someone who scrolled up to read stays where they are.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.chat.message_model import MessageListModel
from app.chat.widgets.markdown_view import MarkdownView
from app.metrics import figures
from app.storage import store as st
from app.ui import icons

SPEAKERS = {"user": "You", "assistant": "Assistant", "system": "System"}
STATE_BADGES = {
    st.INTERRUPTED: "Interrupted: the runtime stopped",
    st.STOPPED: "Stopped",
    st.FAILED: "Failed",
}
MAX_WIDTH = 860


class MessageWidget(QFrame):
    sig_copy = Signal(object)  # self
    sig_regenerate = Signal(object)
    sig_edit = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.message = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(14, 10, 14, 8)
        outer.setSpacing(4)
        head = QHBoxLayout()
        head.setSpacing(8)
        self.speaker = QLabel()
        self.speaker.setObjectName("speaker")
        self.badge = QLabel()
        self.badge.setObjectName("stateBadge")
        self.badge.hide()
        head.addWidget(self.speaker)
        head.addWidget(self.badge)
        head.addStretch(1)
        self.buttons: dict[str, QToolButton] = {}
        for name, tip, signal in (("copy", "Copy the message", self.sig_copy), ("edit", "Edit and resend", self.sig_edit), ("regenerate", "Regenerate the reply", self.sig_regenerate)):
            button = QToolButton()
            button.setObjectName("messageAction")
            button.setIcon(icons.icon(name))
            button.setToolTip(tip)
            button.setAutoRaise(True)
            button.clicked.connect(lambda _c=False, s=signal: s.emit(self))
            head.addWidget(button)
            self.buttons[name] = button
        outer.addLayout(head)
        self.body = MarkdownView()
        outer.addWidget(self.body)
        self.footer = QLabel()
        self.footer.setObjectName("hint")
        self.footer.hide()
        outer.addWidget(self.footer)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

    def show_message(self, message, is_last: bool, generating: bool) -> None:
        self.message = message
        self.setObjectName("userBubble" if message.role == "user" else "assistantBubble")
        self.style().unpolish(self)
        self.style().polish(self)
        self.speaker.setText(SPEAKERS.get(message.role, message.role))
        streaming = message.state == st.STREAMING
        if streaming and not message.content:
            self.body.set_markdown("*…*")
        else:
            self.body.set_markdown(message.content)
        badge = STATE_BADGES.get(message.state)
        self.badge.setVisible(bool(badge))
        self.badge.setText(badge or "")
        stats = message.stats or {}
        speed, error = stats.get("decode_tokens_per_s"), stats.get("error")
        if message.role == "assistant" and speed and not streaming:
            parts = [f"{stats.get('completion_tokens', 0)} tokens", f"{speed:.1f} tok/s", message.model, figures.restored_note(stats), figures.template_note(stats)]
            self.footer.setText(" · ".join(p for p in parts if p))
            self.footer.setToolTip(stats.get("chat_template_fallback") or "")
            self.footer.show()
        elif error and message.state == st.FAILED:
            self.footer.setText(error)
            self.footer.show()
        else:
            self.footer.hide()
        self.buttons["edit"].setVisible(message.role == "user" and not generating)
        self.buttons["regenerate"].setVisible(message.role == "assistant" and is_last and not generating)
        self.buttons["copy"].setVisible(not streaming)


class ChatView(QScrollArea):
    sig_edit_requested = Signal(int)  # row
    sig_regenerate_requested = Signal()
    sig_copied = Signal(str)

    def __init__(self, model: MessageListModel, parent=None):
        super().__init__(parent)
        self.setObjectName("chatScroll")
        self.model = model
        self.generating = False
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        canvas = QWidget()
        canvas.setObjectName("chatCanvas")
        self._column = QVBoxLayout()
        self._column.setContentsMargins(0, 16, 0, 16)
        self._column.setSpacing(10)
        self._column.addStretch(1)
        row = QHBoxLayout(canvas)
        row.setContentsMargins(16, 0, 16, 0)
        holder = QWidget()
        holder.setMaximumWidth(MAX_WIDTH)
        holder.setLayout(self._column)
        row.addStretch(0)
        row.addWidget(holder, 1)
        row.addStretch(0)
        self.setWidget(canvas)
        self.empty = QLabel("Ask anything. Your messages stay on this machine.")
        self.empty.setObjectName("hint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._column.insertWidget(0, self.empty)
        self.widgets: list[MessageWidget] = []
        self.follow = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)
        model.modelReset.connect(self._on_reset)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.rowsRemoved.connect(self._on_rows_removed)
        model.dataChanged.connect(self._on_data_changed)
        self._on_reset()

    def set_generating(self, generating: bool) -> None:
        self.generating = generating
        self._refresh_all()

    # ---- model -> widgets ----------------------------------------------------
    def _on_reset(self) -> None:
        for widget in self.widgets:
            widget.deleteLater()
        self.widgets = []
        self._on_rows_inserted(QModelIndex(), 0, self.model.rowCount() - 1)
        self.follow = True

    def _on_rows_inserted(self, _parent, first: int, last: int) -> None:
        for row in range(first, last + 1):
            widget = MessageWidget()
            widget.sig_copy.connect(self._on_copy)
            widget.sig_edit.connect(lambda w: self.sig_edit_requested.emit(self.widgets.index(w)))
            widget.sig_regenerate.connect(lambda _w: self.sig_regenerate_requested.emit())
            self.widgets.insert(row, widget)
            self._column.insertWidget(row + 1, widget)
        if last >= first:
            self.follow = True  # a new message (yours, or the reply starting) brings the view down
        self._refresh_all()

    def _on_rows_removed(self, _parent, first: int, last: int) -> None:
        for widget in self.widgets[first : last + 1]:
            widget.deleteLater()
        del self.widgets[first : last + 1]
        self._refresh_all()

    def _on_data_changed(self, top_left, bottom_right, _roles=()) -> None:
        for row in range(top_left.row(), bottom_right.row() + 1):
            self._show_row(row)

    def _refresh_all(self) -> None:
        self.empty.setVisible(not self.widgets)
        for row in range(len(self.widgets)):
            self._show_row(row)

    def _show_row(self, row: int) -> None:
        if 0 <= row < len(self.widgets):
            self.widgets[row].show_message(self.model.message(row), row == len(self.widgets) - 1, self.generating)

    def _on_copy(self, widget: MessageWidget) -> None:
        QGuiApplication.clipboard().setText(widget.message.content)
        self.sig_copied.emit(widget.message.content)

    # ---- scrolling -----------------------------------------------------------
    def _on_scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self.follow = value >= bar.maximum() - 8

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self.follow:
            self.verticalScrollBar().setValue(maximum)
