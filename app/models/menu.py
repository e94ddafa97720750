"""The Model menu's own sections: the GGUF files on this machine, the draft model and load settings of
the model chosen now, and where more models come from (Hugging Face, a file, a rescan).

Other model sources add sections of their own (app/remote, app/api) through app/ui/menus.py, as
these do. Choosing a file here loads it and keeps it as the model to start with (StartupModel.choose).
New load settings are stored at once; when they only take effect after a reload, the user is asked
first (window-modal, QMessageBox.open()), and replies being written finish before it happens.
"""

from __future__ import annotations

import dataclasses
import os
from functools import partial
from pathlib import Path
from typing import Callable, Protocol

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from app.formatting import human_size
from app.metrics.figures import number
from app.models.load_settings_dialog import LoadSettingsDialog
from app.models.loader import ModelLoader, needs_reload
from app.models.local_model import FileRole, LocalModels
from app.models.startup import StartupModel
from app.runtime_link import RuntimeLink
from app.ui.menus import MenuSection, ModelMenu
from runtime.models.load_settings import LoadSettings


class ModelSources(Protocol):
    """Where else models come from, for the Model menu's sources section (the catalog feature: app/catalog/ui.py)."""

    @property
    def sig_model_downloaded(self) -> SignalInstance: ...

    def open_browser(self) -> object: ...

    def show_downloads(self) -> object: ...


class LocalModelSections(QObject):
    sig_problem = Signal(str)  # what went wrong, for the window's banner

    def __init__(self, menu: ModelMenu, local_models: LocalModels, loader: ModelLoader, startup: StartupModel,
                 catalog: ModelSources, link: RuntimeLink, replies_running: Callable[[], bool], load: Callable[[str], None], window: QWidget):
        super().__init__(window)
        self.menu, self.local_models, self.loader, self.session = menu, local_models, loader, loader.session
        self.startup, self.catalog, self.link = startup, catalog, link
        self._replies_running = replies_running  # a reply is being written in some conversation
        self._load = load  # loads a file with its load settings (the window's load_model)
        self.window = window  # the dialogs' parent
        self.draft_menu: QMenu | None = None  # Model ▸ Draft model, while the menu has one
        self.load_settings_dialog: LoadSettingsDialog | None = None
        self.reload_question: QMessageBox | None = None  # "Reload the model?", the last one asked
        menu.add_section("local", self._build_local_section, order=0)
        menu.add_section("load", self._build_load_section, order=5)
        menu.add_section("local-sources", self._build_sources_section, order=10)
        loader.sig_prepared.connect(menu.rebuild)
        local_models.sig_scanned.connect(menu.rebuild)
        local_models.sig_added.connect(lambda added: startup.choose(added.path))  # a file the user opened or dropped
        local_models.sig_add_failed.connect(lambda path, reason: self.sig_problem.emit(self.tr("Cannot add {file}: {reason}").format(file=Path(path).name, reason=reason)))
        catalog.sig_model_downloaded.connect(lambda _paths: local_models.scan())
        loader.sig_problem.connect(lambda path, reason: self.sig_problem.emit(self.tr("Could not use the load settings of {file}: {reason}").format(
            file=os.path.basename(path) or self.tr("the model"), reason=reason)))
        loader.sig_context_capped.connect(lambda wanted, fits: self.sig_problem.emit(
            self.tr("This conversation's context size ({wanted} tokens) does not fit in this machine's memory: the model is loaded "
                    "with {fits} tokens instead. Change it in Conversation settings.").format(wanted=wanted, fits=fits)))
        loader.sig_context_beyond_training.connect(lambda asked, trained: self.sig_problem.emit(
            self.tr("The model was trained for a context of {trained} tokens, and its replies fall apart past that: it is loaded with "
                    "{trained} tokens, not the {asked} asked for.").format(trained=number(trained), asked=number(asked))))

    def _build_local_section(self, section: MenuSection) -> None:
        """The Model menu's GGUF files on this machine, grouped by model."""
        loaded_path = os.path.realpath(self.session.wanted.path) if self.session.wanted else None
        tree = self.local_models.model
        if tree.rowCount() == 0:
            section.add_note(self.tr("No GGUF files found yet"))
        for row in range(tree.rowCount()):
            model_item = tree.item(row)
            section.add_heading(model_item.text())
            for child in range(model_item.rowCount()):
                info = model_item.child(child).data(FileRole)
                text = f"{info.quantization}\t{human_size(info.size)}"
                # One entry per file however many places hold it: the one in use is named by the path it was loaded from.
                path = next((p for p in self.local_models.paths_of(info) if os.path.realpath(p) == loaded_path), info.path)
                chosen = os.path.realpath(path) == loaded_path
                tooltip = self.local_models.where(info)
                action = section.add_model(text, chosen, partial(self.startup.choose, path), tooltip=tooltip)
                action.setData(path)  # the file, for whoever looks an entry up by its path

    def _build_load_section(self, section: MenuSection) -> None:
        """Model ▸ Draft model and Model ▸ Load settings… for the model chosen now."""
        prepared = self.loader.prepared
        if self.session.wanted is None or prepared is None or prepared.choice.path != self.session.wanted.path:
            return
        section.add_separator()
        menu = self.draft_menu = section.add_submenu(self.tr("&Draft model"))
        setting = prepared.settings.draft
        auto_name = os.path.basename(prepared.auto_draft) if prepared.auto_draft else self.tr("none on disk")
        section.add_choice(menu, self.tr("Auto ({name})").format(name=auto_name), setting == "auto", partial(self._choose_draft, "auto"))
        section.add_choice(menu, self.tr("None"), setting == "none", partial(self._choose_draft, "none"))
        if prepared.drafts:
            menu.addSeparator()
        for option in prepared.drafts:
            reasons = "; ".join(option.reasons)
            name = os.path.basename(option.path)
            text = name if option.compatible else self.tr("{file} (cannot draft for this model)").format(file=name)  # why: its tooltip
            action = section.add_choice(menu, text, setting == option.path, partial(self._choose_draft, option.path),
                                        enabled=option.compatible, tooltip=option.path if option.compatible else reasons)
            action.setData(option.path)
        section.add_action(self.tr("&Load settings…"), self.open_load_settings)

    def _build_sources_section(self, section: MenuSection) -> None:
        section.add_separator()
        section.add_action(self.tr("Browse Hugging Face models…"), self.catalog.open_browser)
        section.add_action(self.tr("Downloads"), self.catalog.show_downloads)
        section.add_action(self.tr("Open a GGUF file…"), self._on_open_model_file)
        section.add_action(self.tr("Rescan model folders"), self.local_models.scan)

    def _on_open_model_file(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self.window, self.tr("Open a model"), str(Path.home()), self.tr("GGUF models (*.gguf);;All files (*)"))
        if path:
            self.local_models.add_file(path)  # once the runtime has checked and remembered it, it loads

    def _choose_draft(self, draft: str) -> None:
        prepared = self.loader.prepared
        if prepared is not None:
            self.apply_load_settings(prepared.choice.path, dataclasses.replace(prepared.settings, draft=draft))

    def open_load_settings(self) -> LoadSettingsDialog | None:
        """Model ▸ Load settings… for the model chosen now."""
        prepared = self.loader.prepared
        if prepared is None:
            return None
        has_gpu = any(d.type in ("gpu", "igpu") for d in self.link.info.devices) if self.link.info else False
        gpu_names = [d.name for d in self.link.info.gpu_devices] if self.link.info else []
        trained = prepared.header.context_length if prepared.header is not None else 0
        dialog = LoadSettingsDialog(os.path.basename(prepared.choice.path), prepared.settings, prepared.choice.model_n_ctx, prepared.drafts, has_gpu, self.window,
                                    gpu_names, trained)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        path = prepared.choice.path
        dialog.accepted.connect(lambda: self.apply_load_settings(path, dialog.result_settings()))
        dialog.open()
        self.load_settings_dialog = dialog
        return dialog

    def apply_load_settings(self, path: str, settings: LoadSettings) -> None:
        """Store the model's new load settings; when they take a reload, say so and reload once the user agrees."""
        prepared = self.loader.prepared
        before = prepared.settings if prepared is not None and prepared.choice.path == path else None
        try:
            self.loader.save(path, settings)
        except (ValueError, OSError) as exc:
            self.sig_problem.emit(self.tr("Could not store the load settings: {reason}").format(reason=exc))
            return
        if prepared is not None and before is not None:
            prepared.settings = settings
            self.session.speculation = settings.speculation
        changed = needs_reload(before, settings) if before is not None else ["all"]
        if not changed:
            self.menu.rebuild()
            return
        box = QMessageBox(QMessageBox.Icon.Question, self.tr("Reload the model?"),
                          self.tr("These settings take effect when the model is loaded again. Reload it now?"), parent=self.window)
        if self._replies_running():
            box.setInformativeText(self.tr("Replies being written now finish first; none is cut off."))
        reload_button = box.addButton(self.tr("Reload now"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(self.tr("Later"), QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(reload_button)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(lambda button: self._on_reload_answer(button is reload_button, path))
        box.open()
        self.reload_question = box

    def _on_reload_answer(self, reload_now: bool, path: str) -> None:
        if reload_now:
            self._load(path)
