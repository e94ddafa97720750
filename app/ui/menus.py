"""The window's extension points: its menus by id, and the Model menu that model sources add sections to.

Features plug into the window through these (app/main.py installs them with the window's
app/features.py FeatureContext), never by finding a menu by its caption or by guessing from an
action's data what it belongs to:

    context.menu(MenuId.EDIT).addAction(...)                    # a command in the Edit menu
    context.model_menu.add_section("remote", build, order=20)   # a section of the Model menu

A section's `build(section)` runs whenever the Model menu is rebuilt (before it shows, and when a
source calls rebuild() because its list changed). It adds the models it offers with
`section.add_model(...)` and its commands with `section.add_action(...)`. Choosing a model in any
section emits `sig_model_chosen(section id)`, so a source learns that the user picked a model that
is not one of its own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from app.ui import icons


class MenuId(enum.Enum):
    FILE = "file"
    EDIT = "edit"
    CHAT = "chat"
    MODEL = "model"
    VIEW = "view"
    HELP = "help"


def add_command(menu: QMenu, text: str, slot: Callable[[], object] | None, shortcut: QKeySequence | QKeySequence.StandardKey | str = "",
                icon: str = "", checkable: bool = False) -> QAction:
    """A command of one of the window's menus, with its shortcut and icon; a checkable one starts checked
    (a panel shown or hidden). Every command has a shortcut, or is reached through its menu (Alt+letter)."""
    action = menu.addAction(icons.icon(icon), text) if icon else menu.addAction(text)
    if slot is not None:
        action.triggered.connect(lambda _checked=False: slot())
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    if checkable:
        action.setCheckable(True)
        action.setChecked(True)
    return action


class MenuSection:
    """One section of the Model menu while it is built: what its source adds goes here."""

    def __init__(self, menu: "ModelMenu", section_id: str):
        self._menu = menu
        self._id = section_id
        self._models = menu.new_group()  # a section's models are exclusive among themselves
        self._choices: dict[QMenu, QActionGroup] = {}  # each submenu's exclusive entries

    def add_heading(self, text: str) -> QAction:
        return self._menu.addSection(text)

    def add_separator(self) -> QAction:
        return self._menu.addSeparator()

    def add_model(self, text: str, checked: bool, on_chosen: Callable[[], None], tooltip: str = "") -> QAction:
        """A model the user can choose: checked while it is the one in use."""
        action = self._menu.addAction(text)
        action.setCheckable(True)
        action.setChecked(checked)
        action.setToolTip(tooltip)
        self._models.addAction(action)
        action.triggered.connect(lambda _checked=False: self._menu.choose(self._id, on_chosen))
        return action

    def add_action(self, text: str, slot: Callable[[], object]) -> QAction:
        return self._menu.addAction(text, lambda: self._menu.run_entry(slot))

    def add_submenu(self, text: str) -> QMenu:
        """A submenu of this section (e.g. Model ▸ Draft model); its entries' slots run as the menu's own do."""
        submenu = self._menu.addMenu(text)
        self._menu._submenus.append(submenu)
        return submenu

    def add_choice(self, menu: QMenu, text: str, checked: bool, on_chosen: Callable[[], object], enabled: bool = True, tooltip: str = "") -> QAction:
        """An exclusive, checkable entry of `menu` (a submenu of this section); a disabled one says why in its tooltip."""
        action = menu.addAction(text)
        action.setCheckable(True)
        action.setChecked(checked)
        action.setEnabled(enabled)
        action.setToolTip(tooltip)
        menu.setToolTipsVisible(True)
        group = self._choices.get(menu)
        if group is None:
            group = self._choices[menu] = self._menu.new_group()
        group.addAction(action)
        action.triggered.connect(lambda _checked=False: self._menu.run_entry(on_chosen))
        return action

    def add_note(self, text: str) -> QAction:
        """A line that says something (e.g. that there is nothing to choose yet); not clickable."""
        action = self._menu.addAction(text)
        action.setEnabled(False)
        return action


@dataclass
class _Section:
    id: str
    build: Callable[[MenuSection], None]
    order: int


class ModelMenu(QMenu):
    sig_model_chosen = Signal(str)  # the id of the section whose model the user chose

    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(title, parent)
        self._sections: list[_Section] = []
        self._groups: list[QActionGroup] = []
        self._triggering = 0
        self._submenus: list[QMenu] = []
        self.setToolTipsVisible(True)  # an entry's tooltip says where its file lives
        self.aboutToShow.connect(self.rebuild)

    def add_section(self, section_id: str, build: Callable[[MenuSection], None], order: int = 100) -> None:
        """Add (or replace) the section `section_id`; sections appear by `order`, then in the order added."""
        self._sections = [s for s in self._sections if s.id != section_id]
        self._sections.append(_Section(section_id, build, order))
        self._sections.sort(key=lambda s: s.order)
        self.rebuild()

    def rebuild(self) -> None:
        if self._triggering:
            # Clearing deletes the entries, the one being triggered too: rebuild once its slot has returned.
            QTimer.singleShot(0, self, self.rebuild)
            return
        self.clear()
        for group in self._groups:
            group.deleteLater()
        self._groups.clear()
        for submenu in self._submenus:
            submenu.deleteLater()
        self._submenus.clear()
        for section in self._sections:
            section.build(MenuSection(self, section.id))

    def new_group(self) -> QActionGroup:
        group = QActionGroup(self)
        self._groups.append(group)
        return group

    def choose(self, section_id: str, on_chosen: Callable[[], None]) -> None:
        self.run_entry(on_chosen)
        self.sig_model_chosen.emit(section_id)

    def run_entry(self, slot: Callable[[], object]) -> None:
        """An entry's slot; a rebuild it asks for waits until it has returned."""
        self._triggering += 1
        try:
            slot()
        finally:
            self._triggering -= 1
