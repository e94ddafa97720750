"""A reply's thinking, folded above its answer: "Thinking…" while the model thinks, then "Thought for 12 s".

Folded by default; unfolding or folding one is the user's choice for the replies shown after it (the chat
view remembers it in the store). The text is rendered only while the block is unfolded, so a long thinking
reply that streams folded costs no layout. It is never part of the message's copied text.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QToolButton, QVBoxLayout, QWidget

from app.chat.widgets.markdown_view import MarkdownView
from app.chat.words import thinking_caption


class ThinkingBlock(QFrame):
    sig_toggled = Signal(bool)  # unfolded by the user (True) or folded (False)

    def __init__(self, expanded: bool = False, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("thinkingBlock")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.toggle = QToolButton()
        self.toggle.setObjectName("thinkingToggle")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.toggle.setAccessibleDescription(self.tr("Show or hide how the model thought before it answered"))
        self.toggle.toggled.connect(self._on_toggled)
        self.body = MarkdownView()
        self.fold = QFrame()  # the unfolded part: a frame, so the theme can draw its rule at the left
        self.fold.setObjectName("thinkingBody")
        fold_layout = QVBoxLayout(self.fold)
        fold_layout.setContentsMargins(0, 0, 0, 4)
        fold_layout.addWidget(self.body)
        layout.addWidget(self.toggle, alignment=Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.fold)
        self.reasoning = ""
        self._thinking = False  # more reasoning is coming: an open code block in it only grows
        self._rendered: tuple[str, bool] = ("", False)
        self.toggle.setChecked(expanded)
        self._show_fold(expanded)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        """Fold or unfold it without it counting as the user's choice."""
        self.toggle.blockSignals(True)
        self.toggle.setChecked(expanded)
        self.toggle.blockSignals(False)
        self._show_fold(expanded)

    def show_reasoning(self, reasoning: str, thinking: bool, thinking_ms: float) -> None:
        self.reasoning, self._thinking = reasoning, thinking
        caption = thinking_caption(thinking, thinking_ms)
        self.toggle.setText(caption)
        self.toggle.setAccessibleName(caption)
        self.body.set_accessible_name(self.tr("The model's thinking"))
        if self.expanded:
            self._render()

    def _on_toggled(self, expanded: bool) -> None:
        self._show_fold(expanded)
        self.sig_toggled.emit(expanded)

    def _show_fold(self, expanded: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        if expanded:
            self._render()
        self.fold.setVisible(expanded)

    def _render(self) -> None:
        if (self.reasoning, self._thinking) != self._rendered:
            self.body.set_markdown(self.reasoning, self._thinking)
            self._rendered = (self.reasoning, self._thinking)
