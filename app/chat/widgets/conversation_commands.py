"""The commands on a whole conversation, from the menus or the conversation list's context menu: rename,
delete (and undo it), export as Markdown or JSON. Each acts on the conversation given by the list, or on
the one on screen; the dialogs they need (a new title, where to export) are window-modal."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog, QWidget

from app.chat.controller import ChatController
from app.storage.store import Conversation, DeletedBranch, Message


class ConversationCommands(QObject):
    sig_status = Signal(str, int)  # what happened, for the status bar, and for how many ms ("" clears it)
    sig_problem = Signal(str)  # what went wrong, for the window's banner
    sig_undo_available = Signal(bool)  # Edit ▸ Undo delete can bring a conversation back

    def __init__(self, chat: ChatController, window: QWidget):
        super().__init__(window)
        self.chat = chat
        self.window = window  # the dialogs' parent
        # What was deleted last, for an undo: a conversation, or a branch of one (Chat ▸ Delete this branch).
        self._deleted: tuple[Conversation, list[Message]] | DeletedBranch | None = None
        chat.sig_deleted.connect(self._on_deleted)
        chat.sig_branch_deleted.connect(self._on_branch_deleted)

    def rename(self, conversation_id: str | None = None) -> None:
        conv = self.chat.conversation(conversation_id or None)
        if conv is None:
            return
        title, ok = QInputDialog.getText(self.window, self.tr("Rename chat"), self.tr("Title:"), text=conv.title)
        if ok:
            self.chat.rename(conv.id, title)

    def delete(self, conversation_id: str | None = None) -> None:
        conv = self.chat.conversation(conversation_id or None)
        if conv is not None:
            self.chat.delete(conv.id)

    def _on_deleted(self, deleted: tuple[Conversation, list[Message]]) -> None:
        self._deleted = deleted
        self.sig_undo_available.emit(True)
        self.sig_status.emit(self.tr("Deleted “{title}”. Press Ctrl+Z to undo.").format(title=deleted[0].title), 10_000)

    def _on_branch_deleted(self, deleted: DeletedBranch) -> None:
        self._deleted = deleted
        self.sig_undo_available.emit(True)
        self.sig_status.emit(self.tr("Deleted a branch ({count} messages). Press Ctrl+Z to undo.").format(count=len(deleted.messages)), 10_000)

    def undo_delete(self) -> None:
        if isinstance(self._deleted, DeletedBranch):
            self.chat.undo_delete_branch(self._deleted)
        elif self._deleted is not None:
            self.chat.undo_delete(self._deleted)
        if self._deleted is not None:
            self._deleted = None
            self.sig_undo_available.emit(False)
            self.sig_status.emit("", 0)

    def export(self, conversation_id: str | None, kind: str) -> None:
        """Ask where, then write the conversation there as Markdown ("md") or JSON ("json")."""
        conv = self.chat.conversation(conversation_id or None)
        if conv is None:
            return
        suggested = str(Path.home() / self.chat.export_file_name(conv.id, kind))
        file_filter = self.tr("Markdown (*.md)") if kind == "md" else self.tr("JSON (*.json)")
        path, _filter = QFileDialog.getSaveFileName(self.window, self.tr("Export chat"), suggested, file_filter)
        if not path:
            return
        try:
            exported = self.chat.export(conv.id, kind, path)
        except OSError as exc:
            self.sig_problem.emit(self.tr("Could not export to {path}: {reason}").format(path=path, reason=exc.strerror or exc))
            return
        if exported:
            self.sig_status.emit(self.tr("Exported to {path}").format(path=path), 4000)
