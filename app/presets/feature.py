"""File ▸ New chat from preset… (Ctrl+Shift+N) and Edit ▸ Save chat settings as preset…"""

from __future__ import annotations

from app.features import FeatureContext
from app.presets.dialog import PresetPicker, SavePresetDialog
from app.presets.service import PresetService
from app.presets.store import PresetStore
from app.ui.language import Context
from app.ui.menus import MenuId, add_command

PresetMenu = Context("PresetMenu")


class PresetsFeature:
    def __init__(self, context: FeatureContext):
        self.context = context
        self.service = PresetService(PresetStore(context.chat.store.path), context.chat, context.session, context.load_model)
        self.picker: PresetPicker | None = None
        file_menu = context.menu(MenuId.FILE)
        self.action_new = add_command(file_menu, PresetMenu.tr("New chat from &preset…"), self.pick, "Ctrl+Shift+N", "new-chat")
        file_menu.removeAction(self.action_new)  # beside File ▸ New chat, not after Quit
        file_menu.insertAction(file_menu.actions()[1], self.action_new)
        self.action_save = add_command(context.menu(MenuId.EDIT), PresetMenu.tr("Save chat settings as &preset…"), self.save_current)

    def pick(self) -> PresetPicker:
        if self.picker is None:
            self.picker = PresetPicker(self.service, self.context.window())
            self.picker.sig_started.connect(lambda note: self.context.show_status(note, 8000) if note else None)
        self.picker.show_picker()
        return self.picker

    def save_current(self) -> SavePresetDialog:
        dialog = SavePresetDialog(self.service, self.context.window())
        dialog.accepted.connect(lambda: self.context.show_status(PresetMenu.tr("Saved the preset “{name}”").format(name=dialog.saved.name if dialog.saved else ""), 4000))
        dialog.open()
        return dialog


def install(context: FeatureContext) -> PresetsFeature:
    return context.add_feature("presets", PresetsFeature(context))
