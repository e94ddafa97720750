"""An import's progress in the status bar: the file, a bar (busy while the file is read, then conversations
written of all), and Cancel."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget


class ImportProgress(QWidget):
    sig_cancel = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("importProgress")
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(160)
        self.bar.setTextVisible(False)
        self.cancel = QToolButton()
        self.cancel.setText(self.tr("Cancel"))
        self.cancel.setToolTip(self.tr("Stop the import: nothing of the file is kept"))
        self.cancel.clicked.connect(self.sig_cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel)
        self.hide()

    def show_reading(self, file: str) -> None:
        self.label.setText(self.tr("Reading {file}…").format(file=file))
        self.bar.setRange(0, 0)  # busy: reading and checking the file gives no count
        self.cancel.setEnabled(True)
        self.show()

    def show_writing(self, file: str, done: int, total: int) -> None:
        self.label.setText(self.tr("Importing {file}: {done} of {total} conversations").format(file=file, done=done, total=total))
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)

    def show_cancelling(self) -> None:
        self.label.setText(self.tr("Cancelling the import…"))
        self.cancel.setEnabled(False)
