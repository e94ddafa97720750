"""View ▸ Language: the OS's language, or one chosen here; kept in the store, and used from the next start.

Widgets made already keep the strings they were made with, so a new choice takes effect when the
window opens again. Choosing a language other than the one on screen offers that now ("Open again
now"): the answer comes through sig_restart_requested, and app/main.py opens a new window in the
same process (the conversations stay; the model is loaded again).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from app.ui import language
from app.ui.window_state import StateStore


class LanguageMenu(QObject):
    sig_restart_requested = Signal()  # the user wants the window opened again now, in the language chosen

    def __init__(self, store: StateStore, menu: QMenu, parent: QWidget):
        super().__init__(parent)
        self.store = store
        self.menu = menu
        self.parent_widget = parent  # the question's parent
        self.question: QMessageBox | None = None  # "Open it again now?", while it is shown
        self.actions: dict[str, QAction] = {}  # by language code; language.SYSTEM: follow the OS
        saved = store.get_state(language.STATE_KEY, language.SYSTEM) or language.SYSTEM
        group = QActionGroup(self)
        system_name = language.LANGUAGES[language.system_language()]
        choices = [(language.SYSTEM, self.tr("&System language ({name})").format(name=system_name))]
        choices += [(code, name) for code, name in language.LANGUAGES.items()]
        for code, text in choices:
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(code == saved)
            action.setData(code)
            group.addAction(action)
            action.triggered.connect(lambda _checked=False, c=code: self.choose(c))
            self.actions[code] = action

    def choose(self, code: str) -> None:
        """Keep the choice; the window's strings change when it opens again (offered now, or at the next start)."""
        self.store.set_state(language.STATE_KEY, code)
        self.actions[code].setChecked(True)
        wanted = language.wanted(code)
        if wanted == language.current():
            return
        name = language.LANGUAGES[wanted]
        box = QMessageBox(QMessageBox.Icon.Information, self.tr("Language"),
                          self.tr("Lokal will be in {language} the next time its window opens.").format(language=name), parent=self.parent_widget)
        box.setInformativeText(self.tr("Open it again now? The model is loaded again; your conversations stay as they are."))
        restart = box.addButton(self.tr("Open again now"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(self.tr("Later"), QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(restart)
        box.finished.connect(lambda _result: self._on_answer(box.clickedButton() is restart))
        self.question = box
        box.open()

    def _on_answer(self, restart_now: bool) -> None:
        self.question = None
        if restart_now:
            self.sig_restart_requested.emit()
