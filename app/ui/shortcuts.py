"""Help ▸ Keyboard shortcuts: every menu command that has a shortcut, read from the window's menus."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QMenu, QTableView, QVBoxLayout, QWidget

from app.ui.accessibility import describe_buttons, described


def shortcut_rows(menus: list[QMenu]) -> list[tuple[str, str, str]]:
    """(menu, command, shortcut) for each command with a shortcut, in menu order, as the platform writes keys."""
    rows = []
    for menu in menus:
        for action in _actions(menu):
            if not action.shortcut().isEmpty():
                rows.append((menu.title().replace("&", ""), action.text().replace("&", ""), action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)))
    return rows


def _actions(menu: QMenu) -> list[QAction]:
    out: list[QAction] = []
    for action in menu.actions():
        submenu = action.menu()
        out += _actions(submenu) if isinstance(submenu, QMenu) else [action]
    return out


class ShortcutsDialog(QDialog):
    def __init__(self, menus: list[QMenu], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        self.resize(520, 560)
        intro = QLabel(self.tr("Every other command is in a menu: Alt and the underlined letter opens it, the arrow keys and Enter choose. "
                               "Tab moves between the conversation list, the messages and the message box."))
        intro.setWordWrap(True)
        self.model = QStandardItemModel(0, 3, self)
        self.model.setHorizontalHeaderLabels([self.tr("Menu"), self.tr("Command"), self.tr("Shortcut")])
        for row in shortcut_rows(menus):
            self.model.appendRow([QStandardItem(text) for text in row])
        view = QTableView()
        view.setModel(self.model)
        view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.verticalHeader().hide()
        view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
        view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        view.horizontalHeader().setStretchLastSection(True)
        described(view, self.tr("Keyboard shortcuts"), self.tr("One row per command: its menu, its name and its keys"))
        buttons = describe_buttons(QDialogButtonBox(QDialogButtonBox.StandardButton.Close))
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(view, 1)
        layout.addWidget(buttons)
