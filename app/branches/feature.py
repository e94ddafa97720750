"""Chat ▸ Previous branch / Next branch / Delete branch: the keyboard's way to what ◀ n/m ▶ under a message does.

They act on the last message on screen that has siblings: the newest place where the conversation
branched, which is where a regenerated reply or an edited message put its versions.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence

from app.features import FeatureContext
from app.ui.menus import MenuId


class BranchCommands(QObject):
    def __init__(self, context: FeatureContext):
        super().__init__(context.window())
        self.chat = context.chat
        menu = context.menu(MenuId.CHAT)
        menu.addSeparator()
        self.action_previous = self._add(menu.addAction(self.tr("&Previous branch")), "Alt+Left", lambda: self.chat.switch_last_branch(-1))
        self.action_next = self._add(menu.addAction(self.tr("&Next branch")), "Alt+Right", lambda: self.chat.switch_last_branch(1))
        self.action_delete = self._add(menu.addAction(self.tr("&Delete this branch")), "Alt+Shift+Backspace", self._delete)
        self.chat.messages.modelReset.connect(self._update)
        self.chat.messages.rowsInserted.connect(self._update)
        self.chat.messages.rowsRemoved.connect(self._update)
        self.chat.sig_generating_changed.connect(self._update)
        self._update()

    def _add(self, action: QAction, shortcut: str, slot: object) -> QAction:
        action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        return action

    def _delete(self) -> None:
        row = self.chat.last_branch_row()
        if row >= 0:
            self.chat.delete_branch(row)

    def _update(self, *_args: object) -> None:
        row = self.chat.last_branch_row()
        message = self.chat.messages.message(row) if row >= 0 else None
        idle = not self.chat.generating
        self.action_previous.setEnabled(idle and message is not None and message.branch > 1)
        self.action_next.setEnabled(idle and message is not None and message.branch < message.branches)
        self.action_delete.setEnabled(idle and message is not None)


def install(context: FeatureContext) -> BranchCommands:
    return context.add_feature("branches", BranchCommands(context))
