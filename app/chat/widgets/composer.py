"""The message box: Enter sends, Shift+Enter starts a new line, Esc stops the reply.

Files come in by the attach button (a file dialog), by dropping them on the box, or by pasting files or
a picture from the clipboard (app/attachments: the chips above the box, removable until the message is
sent). A message can be sent once every attachment has been read by the runtime.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QImage, QKeyEvent, QResizeEvent, QTextCursor
from PySide6.QtWidgets import QFileDialog, QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from app.attachments import kinds
from app.attachments.service import Attacher
from app.attachments.widgets.chips import PendingChips
from app.ui import icons
from app.ui.accessibility import described

MAX_LINES = 8


def local_files(mime: QMimeData) -> list[str]:
    """The local files in dropped or pasted data, less model files (a .gguf dropped anywhere is loaded: the window's drop)."""
    if not mime.hasUrls():
        return []
    paths = [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]
    return [p for p in paths if p and not p.lower().endswith(".gguf")]


class ComposerEdit(QPlainTextEdit):
    sig_submit = Signal()
    sig_escape = Signal()
    sig_files = Signal(list)  # local paths dropped or pasted (attach them)
    sig_image = Signal(QImage)  # a picture pasted or dropped as image data
    sig_long_text = Signal(str)  # text pasted or dropped that `takes_as_file` says is too long for a message (attach it)
    accepts_files = False  # the composer's box takes files; the in-place editor of a sent message does not
    takes_as_file: Callable[[str], bool] = staticmethod(lambda _text: False)  # pasted text that becomes an attachment

    _placeholders = ("", "")

    def set_placeholders(self, full: str, short: str) -> None:
        """The hint in the empty box: `full` where it fits on the box's one line, else `short` (wrapped, it was cut off)."""
        self._placeholders = (full, short)
        self._fit_placeholder()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_placeholder()

    def _fit_placeholder(self) -> None:
        full, short = self._placeholders
        room = self.viewport().width() - 2 * self.document().documentMargin()
        hint = full if self.fontMetrics().horizontalAdvance(full) <= room else short
        if hint != self.placeholderText():
            self.setPlaceholderText(hint)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        if self.accepts_files and (local_files(source) or source.hasImage()):
            return True
        return super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        """Paste and drop: files and pictures become attachments; text is typed in as before."""
        if self.accepts_files:
            files = local_files(source)
            if files:
                self.sig_files.emit(files)
                return
            if source.hasImage():
                image = source.imageData()
                if isinstance(image, QImage) and not image.isNull():
                    self.sig_image.emit(image)
                    return
            if source.hasText() and self.takes_as_file(text := source.text()):
                self.sig_long_text.emit(text)
                return
        super().insertFromMimeData(source)

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
    sig_send = Signal(str)  # the text (attachments: attacher.take())
    sig_stop = Signal()
    sig_focus_order_changed = Signal()  # chips came or went: the window puts their buttons in its Tab order
    sig_note = Signal(str)  # what the box did that the user may not expect (for the status bar)

    def __init__(self, attacher: Attacher | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composerFrame")
        self.setAcceptDrops(attacher is not None)
        self.attacher = attacher
        self.generating = False
        self.can_send = True
        self._reason = ""
        self.file_dialog: QFileDialog | None = None
        column = QVBoxLayout(self)
        column.setContentsMargins(12, 8, 8, 8)
        column.setSpacing(6)
        layout = QHBoxLayout()
        layout.setContentsMargins(0, 0, 0, 0)
        self.chips: PendingChips | None = None
        self.attach_button: QToolButton | None = None
        if attacher is not None:
            self.chips = PendingChips(attacher.pending)
            self.chips.sig_remove.connect(attacher.remove)
            self.chips.sig_focus_order_changed.connect(self.sig_focus_order_changed)
            attacher.sig_changed.connect(self._update_button)
            column.addWidget(self.chips)
            self.attach_button = QToolButton()
            self.attach_button.setObjectName("attachButton")
            self.attach_button.setIcon(icons.icon("attach"))
            self.attach_button.setIconSize(QSize(20, 20))
            self.attach_button.setAutoRaise(True)
            self.attach_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            self.attach_button.setToolTip(self.tr("Attach files or pictures (you can also drop or paste them here)"))
            described(self.attach_button, self.tr("Attach"), self.tr("Choose files to send with the message: documents, and pictures when the model can see"))
            self.attach_button.clicked.connect(self.choose_files)
            layout.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        column.addLayout(layout)
        self.edit = ComposerEdit()
        self.edit.accepts_files = attacher is not None
        if attacher is not None:
            self.edit.takes_as_file = lambda text: attacher.pastes_as_file(len(text))
        self.edit.setObjectName("composer")
        self.edit.setTabChangesFocus(True)  # Tab moves on, as everywhere else in the window
        self.edit.set_placeholders(self.tr("Message the model  (Enter to send, Shift+Enter for a new line)"), self.tr("Message the model"))
        described(self.edit, self.tr("Message"), self.tr("Enter sends; Shift+Enter starts a new line; Esc stops the reply"))
        self.edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.edit.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.edit.sig_submit.connect(self._on_submit)
        self.edit.sig_escape.connect(self.sig_stop)
        if attacher is not None:
            self.edit.sig_files.connect(attacher.add_paths)
            self.edit.sig_image.connect(attacher.add_image)
            self.edit.sig_long_text.connect(self._attach_text)
        self.edit.textChanged.connect(self._update_button)
        self.button = QToolButton()
        self.button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.button.setIconSize(QSize(20, 20))
        self.button.setAutoRaise(True)
        self.button.clicked.connect(self._on_button)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        # The message's size in tokens once the typing pauses (app/chat/message_meter.py), and a warning where it will not fit.
        self.meter = QLabel()
        self.meter.setObjectName("messageMeter")
        self.meter.setWordWrap(True)
        self.meter.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.meter.hide()
        column.addWidget(self.meter)
        self._fit()
        self._update_button()

    def text(self) -> str:
        return self.edit.toPlainText()

    def propose(self, text: str) -> None:
        """`text` in the box, ready to send or change, and the focus there. What was typed before is replaced as one
        edit, so Ctrl+Z brings it back."""
        cursor = self.edit.textCursor()
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(text)
        self.edit.setTextCursor(cursor)
        self.edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def show_meter(self, text: str, warns: bool) -> None:
        self.meter.setText(text)
        self.meter.setVisible(bool(text))
        if self.meter.property("warns") != warns:
            self.meter.setProperty("warns", warns)
            # A count sits by the send button; a warning is a sentence or two, read from the left.
            self.meter.setAlignment(Qt.AlignmentFlag.AlignLeft if warns else Qt.AlignmentFlag.AlignRight)
            self.meter.style().unpolish(self.meter)  # the style sheet's [warns="true"] rule is matched again
            self.meter.style().polish(self.meter)
        described(self.meter, self.tr("Message size"), text)

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
            ready = self.can_send and self._has_content() and not self._reading()
            self.button.setEnabled(ready)
            self.button.setToolTip(self.tr("Send (Enter)") if self.can_send else self._reason)
            described(self.button, self.tr("Send"), self.tr("Send the message") if self.can_send else self._reason)

    def _on_button(self) -> None:
        if self.generating:
            self.sig_stop.emit()
        else:
            self._on_submit()

    def _has_content(self) -> bool:
        return bool(self.text().strip()) or (self.attacher is not None and bool(self.attacher.take()))

    def _reading(self) -> bool:
        """An attachment is still being read by the runtime: sending waits for its answer."""
        return self.attacher is not None and self.attacher.pending.reading

    def _on_submit(self) -> None:
        if not self._has_content() or self._reading() or self.generating or not self.can_send:
            return
        self.sig_send.emit(self.text().strip())  # the window calls sent() once the message is safely stored

    def sent(self) -> None:
        """The message went out: clear the box and its chips. Until then both stay, so a failed save loses nothing."""
        self.edit.clear()
        if self.attacher is not None:
            self.attacher.pending.clear()

    # ---- attaching -----------------------------------------------------------------
    def _attach_text(self, text: str) -> None:
        """Pasted text too long for the context, as a file (Attacher.pastes_as_file)."""
        if self.attacher is not None and self.attacher.add_text(text):
            self.sig_note.emit(self.tr("The pasted text is longer than the model's context, so it is attached as a file; Ctrl+Shift+V puts it in the message instead"))

    def paste_as_text(self) -> None:
        """Chat ▸ Paste as text in the message: the clipboard's text where the cursor is, however long."""
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.insertPlainText(QGuiApplication.clipboard().text())

    def choose_files(self) -> QFileDialog:
        """The attach button: a file dialog (window-modal, without a nested event loop); pictures only for a model that can see."""
        dialog = QFileDialog(self, self.tr("Attach files"))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        documents = " ".join(f"*{suffix}" for suffix in sorted(kinds.DOCUMENT_SUFFIXES))
        pictures = " ".join(f"*{suffix}" for suffix in sorted(kinds.IMAGE_SUFFIXES))
        filters = [self.tr("Documents ({patterns})").format(patterns=documents)]
        if self.attacher is not None and self.attacher.vision:
            filters.insert(0, self.tr("Documents and pictures ({patterns})").format(patterns=f"{documents} {pictures}"))
            filters.append(self.tr("Pictures ({patterns})").format(patterns=pictures))
        dialog.setNameFilters(filters)
        if self.attacher is not None:
            dialog.filesSelected.connect(self.attacher.add_paths)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        self.file_dialog = dialog
        return dialog

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Files dropped anywhere on the composer (its chips, its buttons), not only on the text."""
        if local_files(event.mimeData()) or event.mimeData().hasImage():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        if self.edit.accepts_files and (local_files(event.mimeData()) or event.mimeData().hasImage()):
            event.acceptProposedAction()
            self.edit.insertFromMimeData(event.mimeData())

    def focusables(self) -> list[QWidget]:
        """What Tab visits here, in order: the chips' remove buttons, attach, the text, send."""
        chips = self.chips.focusables() if self.chips is not None else []
        attach = [self.attach_button] if self.attach_button is not None else []
        return [*chips, *attach, self.edit, self.button]

    def _fit(self, *_args: object) -> None:
        line = self.edit.fontMetrics().lineSpacing()
        lines = min(max(int(self.edit.document().size().height()), 1), MAX_LINES)
        self.edit.setFixedHeight(lines * line + 12)
