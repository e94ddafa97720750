"""What the window does with presets: make one from the chat on screen, start a new chat from one, import and
export them. No widgets here (the dialogs only render and ask); every failure is a PresetError or an
OSError whose message says what went wrong, for the dialog to show.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from app.presets.preset import MAX_FILE_BYTES, Preset, PresetError, Sampling, check_name, from_file_bytes, to_file_text
from app.presets.store import ImportSummary, PresetStore
from app.ui.language import Context
from runtime.models import load_settings

if TYPE_CHECKING:
    from app.chat.controller import ChatController
    from app.models.session import ModelSession


Presets = Context("Presets")


class PresetService:
    def __init__(self, store: PresetStore, chat: ChatController, session: ModelSession, load_model: Callable[[str], None]):
        self.store = store
        self.chat = chat
        self.session = session
        self.load_model = load_model

    def all(self) -> list[Preset]:
        return self.store.all()

    def from_current(self, name: str, with_model: bool) -> Preset:
        """A preset of the chat on screen: its system prompt and sampling, and the model in use with its load
        settings if `with_model`. Stored; PresetError if the name cannot be used."""
        conv = self.chat.current
        settings = self.chat.settings()
        sampling = Sampling(settings.temperature, settings.top_p, settings.min_p, settings.repeat_penalty, settings.max_tokens, settings.seed)
        model, loads = "", None
        if with_model and self.model_in_use():
            model = self.model_in_use()
            try:
                loads = load_settings.read_for(model)
            except (OSError, load_settings.SettingsError) as exc:
                raise PresetError(f"load_settings: {exc}") from None
        preset = Preset(check_name(name), conv.system_prompt if conv else "", sampling, model, loads)
        return self.store.save(preset)

    def model_in_use(self) -> str:
        """The local model file replies come from now ("" when replies come from elsewhere, or none is chosen)."""
        wanted = self.session.wanted
        return wanted.path if wanted is not None and self.chat.local_replies else ""

    def start_chat(self, preset: Preset) -> str:
        """A new chat with the preset's system prompt and sampling; its model loads first (with its load settings,
        which become the model's, as Model ▸ Load settings… would make them). Returns a note for the status
        bar ("" when all of it applied): a model that is not on this machine is said, and the chat starts anyway."""
        note = ""
        if preset.model:
            if not os.path.isfile(preset.model):
                note = Presets.tr("The preset's model is not on this machine ({path}): the chat uses the model in use.").format(path=preset.model)
            elif self.chat.any_generating:
                note = Presets.tr("A reply is being written, so the preset's model was not loaded: choose the preset again once it ends.")
            else:
                if preset.load_settings is not None:
                    load_settings.write(preset.model, preset.load_settings)
                self.load_model(preset.model)
        if self.chat.new_conversation() is None:
            raise PresetError(Presets.tr("The new chat could not be stored: the database refused it."))
        given: dict[str, Any] = preset.sampling.given()  # Sampling's fields are ConversationSettings' by name
        settings = dataclasses.replace(self.chat.new_settings(), **given)
        self.chat.set_settings(preset.system_prompt, settings)
        return note

    def export(self, presets: list[Preset], path: str | Path) -> None:
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(to_file_text(presets), encoding="utf-8")
        os.replace(tmp, target)

    def import_file(self, path: str | Path) -> ImportSummary:
        """Import every preset of the file, or none (PresetError says what is wrong with the file)."""
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise PresetError(f"the file is {size // 1024} KiB: a file of presets is at most {MAX_FILE_BYTES // 1024} KiB")
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
        return self.store.import_presets(from_file_bytes(raw))
