"""Chat ▸ Documents…: the documents attached so far; Attach puts the chosen ones on the message being written."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QDialog, QDialogButtonBox, QLabel, QListView, QVBoxLayout, QWidget

from app.attachments.documents import DocumentsModel
from app.storage.attachments import StoredAttachment
from app.ui.accessibility import describe_buttons, described


class DocumentsDialog(QDialog):
    sig_attach = Signal(list)  # the StoredAttachments chosen

    def __init__(self, model: DocumentsModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Documents"))
        self.model = model
        layout = QVBoxLayout(self)
        hint = QLabel(self.tr("Documents you attached before. Attaching one again reuses what was read and indexed: nothing is read again."))
        hint.setWordWrap(True)
        hint.setObjectName("hint")
        self.empty = QLabel(self.tr("No documents yet: attach one to a message (the paperclip, or drop a file on the message box)."))
        self.empty.setWordWrap(True)
        self.list = QListView()
        self.list.setModel(model)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        described(self.list, self.tr("Documents"), self.tr("Choose documents, then Attach (Enter)"))
        self.list.activated.connect(lambda _index: self.attach_selected())
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.attach_button = self.buttons.addButton(self.tr("Attach"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.attach_button.setAccessibleDescription(self.tr("Put the chosen documents on the message you are writing"))
        describe_buttons(self.buttons)
        self.buttons.accepted.connect(self.attach_selected)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(hint)
        layout.addWidget(self.empty)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.buttons)
        model.modelReset.connect(self._show_state)
        self.list.selectionModel().selectionChanged.connect(self._show_state)
        self._show_state()
        self.resize(520, 420)

    def _show_state(self, *_args: object) -> None:
        self.empty.setVisible(self.model.rowCount() == 0)
        self.attach_button.setEnabled(bool(self.list.selectionModel().selectedRows()))

    def chosen(self) -> list[StoredAttachment]:
        return [self.model.document(index.row()) for index in sorted(self.list.selectionModel().selectedRows(), key=lambda i: i.row())]

    def attach_selected(self) -> None:
        chosen = self.chosen()
        if chosen:
            self.sig_attach.emit(chosen)
            self.accept()

    def showEvent(self, event: object) -> None:  # type: ignore[override]
        super().showEvent(event)  # type: ignore[arg-type]
        self.list.setFocus(Qt.FocusReason.OtherFocusReason)
