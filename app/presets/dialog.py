"""File ▸ New chat from preset… (Ctrl+Shift+N): the presets as a list, what the chosen one sets, and its commands.

Only renders and asks: the Presets service does the work. Enter (or a double click) starts a chat from the
chosen preset; Import…, Export… and Delete act on the list. Errors are said in the dialog, in full.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QListView,
    QVBoxLayout, QWidget,
)

from app.presets.preset import Preset, PresetError
from app.presets.service import PresetService
from app.ui.language import Context



PresetRole = Qt.ItemDataRole.UserRole + 1


class PresetListModel(QAbstractListModel):
    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._items: list[Preset] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        preset = self._items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return preset.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return preset.system_prompt
        if role == PresetRole:
            return preset
        return None

    def set_presets(self, presets: list[Preset]) -> None:
        self.beginResetModel()
        self._items = list(presets)
        self.endResetModel()

    def presets(self) -> list[Preset]:
        return list(self._items)


PresetDetail = Context("PresetDetail")


def describe(preset: Preset) -> str:
    """What a preset sets, in a few lines (the dialog's detail pane)."""
    lines = [preset.system_prompt or PresetDetail.tr("(no system prompt)")]
    given = preset.sampling.given()
    if given:
        lines.append(", ".join(f"{name} {value}" for name, value in given.items()))
    if preset.model:
        lines.append(PresetDetail.tr("Model: {path}").format(path=preset.model))
    if preset.builtin:
        lines.append(PresetDetail.tr("Built in"))
    return "\n\n".join(lines)


class PresetPicker(QDialog):
    sig_started = Signal(str)  # a chat started from a preset: the note for the status bar ("" for none)

    def __init__(self, presets: PresetService, parent: QWidget | None = None):
        super().__init__(parent)
        self.presets = presets
        self.setObjectName("presetPicker")
        self.setWindowTitle(self.tr("New chat from preset"))
        self.resize(620, 400)
        self.model = PresetListModel(self)
        self.list = QListView()
        self.list.setModel(self.model)
        self.list.setAccessibleName(self.tr("Presets"))
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem = QLabel()
        self.problem.setObjectName("problem")
        self.problem.setWordWrap(True)
        self.buttons = QDialogButtonBox()
        self.start_button = self.buttons.addButton(self.tr("&Start chat"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button = self.buttons.addButton(self.tr("&Import…"), QDialogButtonBox.ButtonRole.ActionRole)
        self.export_button = self.buttons.addButton(self.tr("E&xport all…"), QDialogButtonBox.ButtonRole.ActionRole)
        self.delete_button = self.buttons.addButton(self.tr("&Delete"), QDialogButtonBox.ButtonRole.DestructiveRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.start_button.setDefault(True)
        row = QHBoxLayout()
        row.addWidget(self.list, 1)
        row.addWidget(self.detail, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(row, 1)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.list.selectionModel().currentChanged.connect(lambda *_args: self._show_current())
        self.list.activated.connect(lambda _index: self.start())
        self.start_button.clicked.connect(self.start)
        self.import_button.clicked.connect(lambda: self.import_from(self._ask_open()))
        self.export_button.clicked.connect(lambda: self.export_to(self._ask_save()))
        self.delete_button.clicked.connect(self.delete_current)
        self.buttons.rejected.connect(self.reject)

    def refresh(self) -> None:
        try:
            self.model.set_presets(self.presets.all())
        except PresetError as exc:
            self.problem.setText(str(exc))
        if self.model.rowCount():
            self.list.setCurrentIndex(self.model.index(0))
        self._show_current()

    def show_picker(self) -> None:
        self.problem.clear()
        self.refresh()
        self.open()
        self.list.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def current(self) -> Preset | None:
        index = self.list.currentIndex()
        return index.data(PresetRole) if index.isValid() else None

    def _show_current(self) -> None:
        preset = self.current()
        self.detail.setText(describe(preset) if preset else "")
        self.start_button.setEnabled(preset is not None)
        self.delete_button.setEnabled(preset is not None and not preset.builtin)

    def select(self, name: str) -> bool:
        for row, preset in enumerate(self.model.presets()):
            if preset.name == name:
                self.list.setCurrentIndex(self.model.index(row))
                return True
        return False

    def start(self) -> None:
        preset = self.current()
        if preset is None:
            return
        try:
            note = self.presets.start_chat(preset)
        except (PresetError, OSError) as exc:
            self.problem.setText(self.tr("The chat could not start from this preset: {reason}").format(reason=exc))
            return
        self.accept()
        self.sig_started.emit(note)

    def delete_current(self) -> None:
        preset = self.current()
        if preset is not None and not preset.builtin:
            self.presets.store.delete(preset.name)
            self.refresh()

    def _ask_open(self) -> str:
        return QFileDialog.getOpenFileName(self, self.tr("Import presets"), "", self.tr("Presets (*.json)"))[0]

    def _ask_save(self) -> str:
        return QFileDialog.getSaveFileName(self, self.tr("Export presets"), "lokal-presets.json", self.tr("Presets (*.json)"))[0]

    def import_from(self, path: str) -> bool:
        if not path:
            return False
        try:
            summary = self.presets.import_file(path)
        except (PresetError, OSError) as exc:
            self.problem.setText(self.tr("Nothing was imported from {file}: {reason}").format(file=path, reason=exc))
            return False
        self.refresh()
        self.problem.setText(self.tr("Imported {added}; {skipped} already there; {renamed} under a new name.").format(
            added=len(summary.added), skipped=len(summary.skipped), renamed=len(summary.renamed)))
        return True

    def export_to(self, path: str) -> bool:
        """Write the user's own presets (the built-in ones come with every Lokal)."""
        if not path:
            return False
        try:
            presets = self.presets.store.user_presets()
            self.presets.export(presets, path)
        except (PresetError, OSError) as exc:
            self.problem.setText(self.tr("The presets could not be exported: {reason}").format(reason=exc))
            return False
        self.problem.setText(self.tr("Exported {count} presets to {file}").format(count=len(presets), file=path))
        return True


class SavePresetDialog(QDialog):
    """Edit ▸ Save chat settings as preset…: a name, and whether the model in use (and its load settings) go with it."""

    def __init__(self, presets: PresetService, parent: QWidget | None = None):
        super().__init__(parent)
        self.presets = presets
        self.setWindowTitle(self.tr("Save as preset"))
        self.name = QLineEdit()
        self.name.setPlaceholderText(self.tr("Name of the preset"))
        self.name.setAccessibleName(self.tr("Name of the preset"))
        model = presets.model_in_use()
        self.with_model = QCheckBox(self.tr("With the model in use and its load settings ({name})").format(name=model.rsplit("/", 1)[-1]) if model else self.tr("With the model in use (none is)"))
        self.with_model.setEnabled(bool(model))
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(self.tr("The chat's system prompt and sampling settings become a preset for new chats.")))
        layout.addWidget(self.name)
        layout.addWidget(self.with_model)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        self.saved: Preset | None = None

    def save(self) -> None:
        try:
            self.saved = self.presets.from_current(self.name.text(), self.with_model.isChecked())
        except PresetError as exc:
            self.problem.setText(str(exc))
            return
        self.accept()
