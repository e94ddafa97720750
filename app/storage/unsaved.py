"""Closing the window while replies are only in memory: the database refused them (a full disk, a lock),
and quitting now would lose them, so the close asks first.

The question is window-modal and asynchronous (QMessageBox.open(), no nested event loop): the close
that asked is refused, and the answer closes the window again or does nothing.
- Retry: the window closes again, which writes what is kept; if the database still refuses it, the
  question comes back.
- Quit without saving: the window closes, and what is kept is lost.
- Cancel (or Esc): the window stays open, the replies kept and retried as before.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from app.storage.store import Store


class UnsavedReplies(QObject):
    sig_asked = Signal(object)  # the question (a QMessageBox), once it is shown
    sig_close_again = Signal()  # the user answered Retry or Quit without saving: close the window again

    def __init__(self, store: Store, window: QWidget):
        super().__init__(window)
        self.store = store
        self.window = window  # the question's parent
        self.question: QMessageBox | None = None  # while it is shown
        self._let_go = False  # the user chose to quit without saving

    def may_close(self) -> bool:
        """The window's last step before it closes: True when nothing waits to be written (written now, if the
        database takes it) or the user let it go; False while the question is shown (asked once)."""
        if self._let_go or self.store.retry_deferred():
            return True
        if self.question is None:
            self._ask()
        return False

    def _ask(self) -> None:
        problem = self.store.problem
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            self.tr("Unsaved replies"),
            self.tr("%n message(s) could not be saved yet.", "", self.store.deferred_writes) + (f" {problem.message}" if problem else ""),
            parent=self.window,
        )
        retry = box.addButton(self.tr("Retry"), QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton(self.tr("Quit without saving"), QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(retry)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda _result: self._on_answer(box, retry, discard))
        self.question = box
        box.open()
        self.sig_asked.emit(box)

    def _on_answer(self, box: QMessageBox, retry: QPushButton, discard: QPushButton) -> None:
        self.question = None
        clicked = box.clickedButton()
        box.deleteLater()
        if clicked is discard:
            self._let_go = True
        if clicked is retry or clicked is discard:
            self.sig_close_again.emit()
