"""The conversation, one widget per message, kept in step with a MessageListModel.

It follows the bottom while a reply streams only if the user was already at
the bottom: someone who scrolled up to read stays where they are.

A reply's thinking shows folded above its answer (widgets/thinking_block.py); Copy copies the answer
alone. A reply cut by its length limit or by a full context says so under it, with a Continue button
that extends it in place.

A message of yours is edited in place: Edit (or Chat ▸ Edit last message) turns its text into an
editor; Enter resends it (as a new branch: the message as it was and the replies after it stay),
Shift+Enter starts a new line, Esc cancels.

A message with siblings (edits of it, or replies written again) shows ◀ n/m ▶ under it: the arrows
show another branch, and a button deletes this one (Edit ▸ Undo delete brings it back).
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy, QToolButton, QVBoxLayout, QWidget,
)

from app.attachments.widgets.chips import MessageAttachments
from app.attachments.widgets.citations import Citations
from app.chat import long_text
from app.chat.message_model import MessageListModel
from app.chat.words import cut_note, speaker_name, state_badge
from app.chat.widgets.composer import ComposerEdit
from app.chat.widgets.long_message import LongMessage
from app.chat.widgets.markdown_view import MarkdownView
from app.chat.widgets.scroll_bar_first import ScrollBarFirst
from app.chat.widgets.thinking_block import ThinkingBlock
from app.chat.widgets.welcome import Welcome
from app.metrics import figures
from app.storage import store as st
from app.storage.store import Message
from app.ui import icons
from runtime.protocol import GenerationStats

MAX_WIDTH = 860
FIRST_MESSAGE_INDEX = 2  # in the column: Show earlier messages, the welcome, then the messages
# Opening a conversation builds the widgets of its newest SHOWN_AT_ONCE messages at once, then the older ones
# for at most FILL_BUDGET_MS per turn of the event loop (each takes a few ms: a QTextBrowser and its layout).
SHOWN_AT_ONCE = 6
FILL_BUDGET_MS = 12


def reply_footer(stats: GenerationStats, model: str) -> str:
    """'25 tokens · 57.0 tok/s · SmolLM2 135M · restored from cache'."""
    parts = [
        figures.tokens(stats.completion_tokens), figures.speed(stats.decode_tokens_per_s), model,
        figures.restored_note(stats), figures.template_note(stats),
    ]
    return " · ".join(p for p in parts if p)


class InlineEditor(QFrame):
    """Your message, editable where it stands: Enter resends, Shift+Enter is a new line, Esc cancels."""

    sig_submit = Signal(str)
    sig_cancel = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("inlineEditor")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.edit = ComposerEdit()
        self.edit.setObjectName("inlineEdit")
        self.edit.setTabChangesFocus(True)
        self.edit.setAccessibleName(self.tr("Edit your message"))
        self.edit.setAccessibleDescription(self.tr("Enter resends it as a new branch (the message as it was and its replies stay, ◀ ▶); Shift+Enter starts a new line; Esc cancels"))
        self.edit.sig_submit.connect(self._on_submit)
        self.edit.sig_escape.connect(self.sig_cancel)
        self.edit.document().documentLayout().documentSizeChanged.connect(self._fit)
        row = QHBoxLayout()
        hint = QLabel(self.tr("Enter to resend · Shift+Enter for a new line · Esc to cancel"))
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setAccessibleDescription(self.tr("Keep the message as it was"))
        self.cancel_button.clicked.connect(self.sig_cancel)
        self.resend_button = QPushButton(self.tr("Resend"))
        self.resend_button.setDefault(True)
        self.resend_button.setAccessibleDescription(self.tr("Send the edited message as a new branch; the message as it was stays (◀ ▶)"))
        self.resend_button.clicked.connect(self._on_submit)
        row.addWidget(hint, 1)
        row.addWidget(self.cancel_button)
        row.addWidget(self.resend_button)
        layout.addWidget(self.edit)
        layout.addLayout(row)
        self.edit.textChanged.connect(lambda: self.resend_button.setEnabled(bool(self.text().strip())))

    def start(self, text: str) -> None:
        self.edit.setPlainText(text)
        self.edit.moveCursor(self.edit.textCursor().MoveOperation.End)
        self._fit()
        self.show()
        self.edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def text(self) -> str:
        return self.edit.toPlainText()

    def _on_submit(self) -> None:
        if self.text().strip():
            self.sig_submit.emit(self.text())

    def _fit(self, *_args: object) -> None:
        lines = min(max(int(self.edit.document().size().height()), 2), 14)
        self.edit.setFixedHeight(lines * self.edit.fontMetrics().lineSpacing() + 14)


class BranchBar(QWidget):
    """◀ n/m ▶ under a message with siblings, and Delete branch."""

    sig_step = Signal(int)  # -1: the branch before, +1: the one after
    sig_delete = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("branchBar")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        self.previous = self._button("◀", self.tr("Previous branch"), self.tr("Show the version before this one (Alt+Left)"))
        self.previous.clicked.connect(lambda: self.sig_step.emit(-1))
        self.label = QLabel()
        self.label.setObjectName("hint")
        self.next = self._button("▶", self.tr("Next branch"), self.tr("Show the version after this one (Alt+Right)"))
        self.next.clicked.connect(lambda: self.sig_step.emit(1))
        self.delete = self._button("", self.tr("Delete branch"), self.tr("Delete this version and every reply under it (Edit ▸ Undo delete brings it back)"))
        self.delete.setIcon(icons.icon("delete"))
        self.delete.clicked.connect(self.sig_delete)
        row.addWidget(self.previous)
        row.addWidget(self.label)
        row.addWidget(self.next)
        row.addWidget(self.delete)
        row.addStretch(1)

    def _button(self, text: str, name: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName("branchButton")
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(name)
        button.setAccessibleDescription(tip)
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        button.setAutoRaise(True)
        return button

    def show_branch(self, branch: int, branches: int, enabled: bool) -> None:
        self.label.setText(f"{branch}/{branches}")
        self.label.setAccessibleName(self.tr("Version {n} of {m}").format(n=branch, m=branches))
        self.previous.setEnabled(enabled and branch > 1)
        self.next.setEnabled(enabled and branch < branches)
        self.delete.setEnabled(enabled)


class MessageWidget(QFrame):
    sig_copy = Signal(object)  # self
    sig_regenerate = Signal(object)
    sig_edit = Signal(object)
    sig_edit_submitted = Signal(object, str)  # self, the new text
    sig_continue = Signal(object)  # self: extend this cut reply in place
    sig_thinking_toggled = Signal(bool)  # the user unfolded (True) or folded a reply's thinking
    sig_branch = Signal(object, int)  # self, -1 or +1: show a sibling
    sig_delete_branch = Signal(object)  # self

    def __init__(self, image_source: Callable[[str], bytes | None] = lambda _id: None, parent: QWidget | None = None, thinking_expanded: bool = False):
        super().__init__(parent)
        self.message: Message | None = None
        self.editor: InlineEditor | None = None
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
        actions = (
            ("copy", self.tr("Copy"), self.tr("Copy the message to the clipboard"), self.sig_copy),
            ("edit", self.tr("Edit"), self.tr("Edit this message in place and resend it"), self.sig_edit),
            ("regenerate", self.tr("Regenerate"), self.tr("Write this reply again"), self.sig_regenerate),
        )
        for name, text, tip, signal in actions:
            button = QToolButton()
            button.setObjectName("messageAction")
            button.setIcon(icons.icon(name))
            button.setToolTip(tip)
            button.setAccessibleName(text)
            button.setAccessibleDescription(tip)
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            button.setAutoRaise(True)
            button.clicked.connect(lambda _c=False, s=signal: s.emit(self))
            head.addWidget(button)
            self.buttons[name] = button
        outer.addLayout(head)
        self.thinking = ThinkingBlock(thinking_expanded)
        self.thinking.sig_toggled.connect(self.sig_thinking_toggled)
        self.thinking.hide()
        outer.addWidget(self.thinking)
        self.attached = MessageAttachments(image_source)  # its files: chips, pictures as thumbnails (app/attachments)
        outer.addWidget(self.attached)
        self.body = MarkdownView()
        outer.addWidget(self.body)
        self.long: LongMessage | None = None  # a long message of yours, folded, in place of the body: made for one
        self.citations = Citations()  # a reply's sources, each opening to the text it was given
        outer.addWidget(self.citations)
        self._outer = outer
        self.cut = QWidget()  # why the reply stopped where it did, and Continue
        cut_row = QHBoxLayout(self.cut)
        cut_row.setContentsMargins(0, 0, 0, 0)
        self.cut_note = QLabel()
        self.cut_note.setObjectName("hint")
        self.cut_note.setWordWrap(True)
        self.continue_button = QPushButton(self.tr("Continue"))
        self.continue_button.setAccessibleDescription(self.tr("Let the model go on writing this reply where it stopped"))
        self.continue_button.clicked.connect(lambda: self.sig_continue.emit(self))
        cut_row.addWidget(self.cut_note, 1)
        cut_row.addWidget(self.continue_button)
        self.cut.hide()
        outer.addWidget(self.cut)
        self.footer = QLabel()
        self.footer.setObjectName("hint")
        self.footer.setWordWrap(True)  # a failed reply's reason can be long: unwrapped, it widened the message past the chat
        self.footer.hide()
        outer.addWidget(self.footer)
        self._text_shown = True
        self.branch_bar: BranchBar | None = None  # made for a message that has siblings
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._focusables: list[QWidget] | None = None

    def focusables(self) -> list[QWidget]:
        """Its widgets Tab visits, looked up once per content shown (the window asks for every message's at each change)."""
        if self._focusables is None:
            self._focusables = [w for w in self.findChildren(QWidget) if w.focusPolicy() & Qt.FocusPolicy.TabFocus]
        return self._focusables

    @property
    def editing(self) -> bool:
        return self.editor is not None and self.editor.isVisible()

    def start_editing(self) -> None:
        if self.message is None or self.message.role != "user":
            return
        if self.editor is None:
            self.editor = InlineEditor()
            self.editor.sig_submit.connect(lambda text: self.sig_edit_submitted.emit(self, text))
            self.editor.sig_cancel.connect(self.stop_editing)
            self._outer.insertWidget(self._outer.indexOf(self.body) + 1, self.editor)
            self._focusables = None
        self.body.hide()
        if self.long is not None:
            self.long.hide()
        self.buttons["edit"].hide()
        self.editor.start(self.message.content)

    def stop_editing(self) -> None:
        if self.editor is None:
            return
        focus = QGuiApplication.focusObject()
        had_focus = self.editor.isAncestorOf(focus) if isinstance(focus, QWidget) else False
        self.editor.hide()
        self._show_text_widget()
        self.buttons["edit"].setVisible(self.message is not None and self.message.role == "user")
        if had_focus:
            self.buttons["edit"].setFocus(Qt.FocusReason.OtherFocusReason)

    def show_message(self, message: Message, is_last: bool, generating: bool) -> None:
        self.message = message
        self._focusables = None  # its text may bring code blocks (with their Copy buttons) or take them away
        user = message.role == "user"
        name = "userBubble" if user else "assistantBubble"
        if name != self.objectName():  # the style sheet styles bubbles by name; re-styling each flush cost a streaming reply
            self.setObjectName(name)
            self.style().unpolish(self)
            self.style().polish(self)
        speaker = speaker_name(message.role)
        self.speaker.setText(speaker)
        self.setAccessibleName(self.tr("Message from {speaker}").format(speaker=speaker) if not user else self.tr("Your message"))
        self.body.set_accessible_name(self.accessibleName())
        streaming = message.state == st.STREAMING
        # Thinking until the answer begins: the controller sets thinking_ms then (and the runtime's value at the end).
        thinking = streaming and bool(message.reasoning) and not message.thinking_ms
        self.thinking.setVisible(bool(message.reasoning))
        if message.reasoning:
            self.thinking.show_reasoning(message.reasoning, thinking, message.thinking_ms)
        folded = self._show_long(message.content if user else "")
        if folded:
            self.body.set_markdown("")  # not formatted: megabytes of Markdown froze the window for seconds
        elif streaming and not message.content:
            self.body.set_markdown("*…*")
        else:
            self.body.set_markdown(message.content, streaming)
        # No "…" under a reply still thinking, and no empty text under a message of files only.
        files_only = bool(message.attachments) and not message.content
        self._text_shown = not (thinking and not message.content) and not files_only
        self._show_text_widget()
        self.attached.show_attachments(message.attachments)
        self.citations.show_citations(message.citations)
        badge = state_badge(message.state)
        self.badge.setVisible(bool(badge))
        self.badge.setText(badge)
        record = message.record
        stats = record.stats if record is not None else None
        if message.role == "assistant" and stats is not None and stats.decode_tokens_per_s and not streaming:
            self.footer.setText(reply_footer(stats, message.model))
            self.footer.setToolTip(stats.chat_template_fallback)
            self.footer.show()
        elif record is not None and record.error and message.state == st.FAILED:
            self.footer.setText(record.error)
            self.footer.show()
        else:
            self.footer.hide()
        self.show_actions(is_last, generating)

    def _show_long(self, text: str) -> bool:
        """Show `text` folded if it is long (app/chat/long_text.py); whether it is. Its widget is made for the first
        long one: most messages never need it, and it costs as much to make as the rest of a message's widgets."""
        if self.long is None:
            if not long_text.is_long(text):
                return False
            self.long = LongMessage()
            self._outer.insertWidget(self._outer.indexOf(self.body) + 1, self.long)
            self._focusables = None
        self.long.set_accessible_name(self.accessibleName())
        return self.long.show_text(text)

    def _show_text_widget(self) -> None:
        """The body, or a long message folded, unless the message is being edited or has no text to show."""
        shown = self._text_shown and not self.editing
        folded = self.long is not None and self.long.folded is not None
        self.body.setVisible(shown and not folded)
        if self.long is not None:
            self.long.setVisible(shown and folded)

    def _show_branches(self, generating: bool) -> None:
        message = self.message
        if message is None or message.branches <= 1:
            if self.branch_bar is not None:
                self.branch_bar.hide()
            return
        if self.branch_bar is None:
            self.branch_bar = BranchBar()
            self.branch_bar.sig_step.connect(lambda step: self.sig_branch.emit(self, step))
            self.branch_bar.sig_delete.connect(lambda: self.sig_delete_branch.emit(self))
            self._outer.addWidget(self.branch_bar)
            self._focusables = None
        self.branch_bar.show_branch(message.branch, message.branches, not generating)
        self.branch_bar.show()

    def show_actions(self, is_last: bool, generating: bool) -> None:
        """The buttons this message offers now (Edit, Regenerate and Continue wait while a reply streams)."""
        message = self.message
        if message is None:
            return
        self.buttons["edit"].setVisible(message.role == "user" and not generating and not self.editing)
        self.buttons["regenerate"].setVisible(message.role == "assistant" and is_last and not generating)
        self.buttons["copy"].setVisible(message.state != st.STREAMING)
        record = message.record
        cut = message.role == "assistant" and message.state == st.COMPLETE and record is not None and record.finish_reason == "length"
        if cut and record is not None:
            self.cut_note.setText(cut_note(record.stats is not None and record.stats.context_full))
        self.cut.setVisible(cut)
        self.continue_button.setVisible(cut and is_last and not generating)  # the live cache holds the last reply only
        self._show_branches(generating)


class ChatView(QScrollArea):
    sig_edit_submitted = Signal(int, str)  # row, the new text: the window resends it
    sig_regenerate_requested = Signal()
    sig_copied = Signal(str)
    sig_focus_order_changed = Signal()  # messages came or went: the window puts them back in its Tab order
    sig_show_earlier = Signal()  # a long conversation shows its newest messages: the user asks for older ones
    sig_continue_requested = Signal()  # Continue under the last reply, cut by its length limit or a full context
    sig_thinking_expanded_changed = Signal(bool)  # the user's choice: replies' thinking unfolded or folded (to remember)
    sig_branch_requested = Signal(int, int)  # row, -1 or +1: show another branch at that message
    sig_delete_branch_requested = Signal(int)  # row: delete the branch that starts there

    def __init__(self, model: MessageListModel, parent: QWidget | None = None, image_source: Callable[[str], bytes | None] = lambda _id: None):
        super().__init__(parent)
        self.setObjectName("chatScroll")
        self.model = model
        self.image_source = image_source  # a picture's bytes by its attachment id (the store), for the full view
        self.generating = False
        self.thinking_expanded = False  # how a reply's thinking shows at first: the user's last choice (set_thinking_expanded)
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
        self.setAccessibleName(self.tr("Conversation"))
        self.setAccessibleDescription(self.tr("The messages of this conversation: Tab moves through them, Page Up and Page Down scroll"))
        self.welcome = Welcome()  # an empty conversation's: which model answers, and first questions
        self._column.insertWidget(0, self.welcome)
        self.earlier = QPushButton(self.tr("Show earlier messages"))
        self.earlier.setObjectName("showEarlier")
        self.earlier.setAccessibleDescription(self.tr("This conversation is long: it shows its newest messages, and this adds older ones above them"))
        self.earlier.clicked.connect(self.sig_show_earlier)
        self.earlier.hide()
        self._column.insertWidget(0, self.earlier)
        self.widgets: list[MessageWidget] = []  # of the model's rows from _unbuilt on
        self._unbuilt = 0
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._fill)
        self.follow = True
        self.revealed: MessageWidget | None = None  # the message a search's hit scrolled to last
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)
        model.modelReset.connect(self._on_reset)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.rowsRemoved.connect(self._on_rows_removed)
        model.dataChanged.connect(self._on_data_changed)
        self._scroll_bar = ScrollBarFirst(self)
        self._on_reset()

    def set_thinking_expanded(self, expanded: bool) -> None:
        """How replies show their thinking: the remembered choice, read by the window at start (a user's fold or
        unfold of one reply after that sets it for the replies shown later, not for those on screen)."""
        self.thinking_expanded = expanded
        for widget in self.widgets:
            widget.thinking.set_expanded(expanded)

    def _on_thinking_toggled(self, expanded: bool) -> None:
        self.thinking_expanded = expanded
        self.sig_thinking_expanded_changed.emit(expanded)

    def set_generating(self, generating: bool) -> None:
        self.generating = generating
        for row, widget in enumerate(self.widgets):  # only the buttons change: no widget is restyled or re-rendered
            if widget.message is not None:
                widget.show_actions(row == len(self.widgets) - 1, generating)

    # ---- model -> widgets ----------------------------------------------------
    # The widgets are built for the newest rows first: rows 0.._unbuilt-1 of the model have none yet, and are
    # built a few per turn of the event loop (_fill), so a conversation of many messages never freezes the window.
    def _row_of(self, widget: MessageWidget) -> int:
        return self.widgets.index(widget) + self._unbuilt

    def _new_widget(self) -> MessageWidget:
        widget = MessageWidget(self.image_source, thinking_expanded=self.thinking_expanded)
        widget.sig_copy.connect(self._on_copy)
        widget.sig_continue.connect(lambda _w: self.sig_continue_requested.emit())
        widget.sig_thinking_toggled.connect(self._on_thinking_toggled)
        widget.sig_edit.connect(self._edit)
        widget.sig_edit_submitted.connect(lambda w, text: self.sig_edit_submitted.emit(self._row_of(w), text))
        widget.sig_regenerate.connect(lambda _w: self.sig_regenerate_requested.emit())
        widget.sig_branch.connect(lambda w, step: self.sig_branch_requested.emit(self._row_of(w), step))
        widget.sig_delete_branch.connect(lambda w: self.sig_delete_branch_requested.emit(self._row_of(w)))
        return widget

    def _on_reset(self) -> None:
        for widget in self.widgets:
            widget.hide()
            widget.deleteLater()
        self.widgets = []
        self._unbuilt = self.model.rowCount()
        self.follow = True
        with self._scroll_bar.opening(has_messages=self.model.rowCount() > 0):  # laid out once (scroll_bar_first.py)
            self._fill(at_least=SHOWN_AT_ONCE)

    def _fill(self, at_least: int = 1) -> None:
        """Build the widgets of the newest rows still without one: `at_least` of them, more while FILL_BUDGET_MS lasts."""
        started, built = time.perf_counter(), 0
        while self._unbuilt and (built < at_least or (time.perf_counter() - started) * 1000 < FILL_BUDGET_MS):
            widget = self._new_widget()
            self.widgets.insert(0, widget)
            self._column.insertWidget(FIRST_MESSAGE_INDEX, widget)
            self._unbuilt -= 1
            built += 1
            self._show_row(self._unbuilt)
            widget.show()  # now, its content set: laid out once (the layout would show it a turn later)
        self._show_chrome()
        if self._unbuilt:
            self._fill_timer.start()
        else:
            self.sig_focus_order_changed.emit()  # once all are there, not at every few

    def _on_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        if last < self.model.rowCount() - 1 and first <= self._unbuilt:
            self._unbuilt += last - first + 1  # older messages shown above: built a few at a time, newest first
            self._fill()
            return
        for row in range(first, last + 1):
            widget = self._new_widget()
            self.widgets.insert(row - self._unbuilt, widget)
            self._column.insertWidget(row - self._unbuilt + FIRST_MESSAGE_INDEX, widget)
        if last >= first and last == self.model.rowCount() - 1:
            self.follow = True  # a new message (yours, or the reply starting) brings the view down; older ones shown above do not
        # Only the new rows and the one that was last before them change: a long conversation's other widgets stay as they are.
        for row in {*range(first, last + 1), first - 1}:
            self._show_row(row)
        self._show_chrome()
        self.sig_focus_order_changed.emit()

    def _on_rows_removed(self, _parent: QModelIndex, first: int, last: int) -> None:
        unbuilt_gone = max(0, min(last + 1, self._unbuilt) - first)
        built = slice(max(first, self._unbuilt) - self._unbuilt, max(0, last + 1 - self._unbuilt))
        for widget in self.widgets[built]:
            widget.hide()  # gone from the column now, not when the event loop next deletes it (a branch switch puts another in its place)
            widget.deleteLater()
        del self.widgets[built]
        self._unbuilt -= unbuilt_gone
        for row in (first - 1, first):  # the rows now around the gap: one may have become the last
            self._show_row(row)
        self._show_chrome()
        self.sig_focus_order_changed.emit()

    def _on_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, _roles: object = ()) -> None:
        for row in range(top_left.row(), bottom_right.row() + 1):
            self._show_row(row)

    def _show_chrome(self) -> None:
        empty = self.model.rowCount() == 0
        if empty != self.welcome.isVisibleTo(self):
            self.welcome.setVisible(empty)
            self.sig_focus_order_changed.emit()  # its buttons come into the Tab order, or leave it
        self.earlier.setVisible(self.model.has_earlier() and not self._unbuilt)

    def _show_row(self, row: int) -> None:
        index = row - self._unbuilt
        if 0 <= index < len(self.widgets) and row < self.model.rowCount():
            self.widgets[index].show_message(self.model.message(row), row == self.model.rowCount() - 1, self.generating)

    def focusables(self) -> list[QWidget]:
        """The widgets Tab visits in the messages, top to bottom (buttons, text, code, an open editor)."""
        out: list[QWidget] = [self.earlier] if self.earlier.isVisibleTo(self) else []
        if self.welcome.isVisibleTo(self):
            out += self.welcome.focusables()
        for widget in self.widgets:
            out += widget.focusables()
        return out

    # ---- editing in place ------------------------------------------------------
    def edit_last_user_message(self) -> bool:
        """Chat ▸ Edit last message: your latest message turns into an editor, with the focus in it."""
        for widget in reversed(self.widgets):
            if widget.message is not None and widget.message.role == "user":
                self._edit(widget)
                self.ensureWidgetVisible(widget)
                return True
        return False

    def _edit(self, widget: MessageWidget) -> None:
        """One message is edited at a time: starting another closes the first."""
        for other in self.widgets:
            if other is not widget:
                other.stop_editing()
        widget.start_editing()
        self.sig_focus_order_changed.emit()

    def editing_row(self) -> int:
        return next((self._row_of(widget) for widget in self.widgets if widget.editing), -1)

    def stop_editing(self) -> None:
        for widget in self.widgets:
            widget.stop_editing()

    def _on_copy(self, widget: MessageWidget) -> None:
        if widget.message is None:
            return
        QGuiApplication.clipboard().setText(widget.message.content)
        self.sig_copied.emit(widget.message.content)

    # ---- scrolling -----------------------------------------------------------
    def reveal_row(self, row: int, words: Sequence[str] = ()) -> None:
        """Scroll to the message at `row` (a search's hit: ChatController.sig_revealed), building its widget first; in a
        long message folded, the first of the `words` searched for is put in sight."""
        if not 0 <= row < self.model.rowCount():
            return
        if row < self._unbuilt:
            self._fill(at_least=self._unbuilt - row)
        widget = self.widgets[row - self._unbuilt]
        if widget.long is not None:
            widget.long.show_words(words)
        self.follow = False
        self.revealed = widget
        # Once the layout has placed the widgets just built: scrolled to now, it could land short of it.
        QTimer.singleShot(0, lambda: self.ensureWidgetVisible(widget, 0, 40))

    def _on_scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self.follow = value >= bar.maximum() - 8

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self.follow:
            self.verticalScrollBar().setValue(maximum)
