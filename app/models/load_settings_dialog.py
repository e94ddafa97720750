"""Model ▸ Load settings…: the stored load settings of one model file (runtime/models/load_settings.py).

Only renders and returns a LoadSettings; the window's controller stores it and reloads. The GPU
offload control says so when this build has no GPU device, rather than offering a choice that does
nothing; the split across GPU devices (split_mode, main_gpu) is offered only where there are several.
Flash attention Off and a quantized KV cache exclude each other (llama.cpp needs flash attention for a
quantized V cache, and the load refuses the pair): while one is chosen the other's choices are turned off,
each saying why, so the dialog never returns settings that cannot load.
"""

from __future__ import annotations

import os
import typing
from typing import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from app.metrics.figures import number
from app.ui.accessibility import describe_buttons
from runtime.cores import default_threads
from runtime.models.drafts import DraftOption
from runtime.models.load_settings import FLASH_ATTN_WORDS, LoadSettings
from runtime.protocol import KvType, SplitMode

AUTOMATIC = 0  # the spin boxes' value for "automatic" (context: the model's trained context as far as memory allows; threads: the runtime's choice)


class LoadSettingsDialog(QDialog):
    def __init__(self, file_name: str, settings: LoadSettings, default_n_ctx: int | None, draft_options: list[DraftOption],
                 has_gpu: bool, parent: QWidget | None = None, gpu_names: Sequence[str] = (), trained_n_ctx: int = 0):
        """`gpu_names`: the GPU devices' names, in llama.cpp's order (main_gpu is an index into them); `trained_n_ctx`: the
        context the model was trained for (0: its file does not say), the most the context box offers (app/models/loader.py)."""
        super().__init__(parent)
        self.setWindowTitle(self.tr("Load settings of {file}").format(file=file_name))
        self.setMinimumWidth(480)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        layout.addWidget(QLabel(self.tr("Used wherever this model file is loaded: the window, lokal chat and lokal serve.")))

        self.offload = QComboBox()
        for word, text in (("auto", self.tr("Auto (as many layers as fit)")), ("all", self.tr("All layers")), ("off", self.tr("Off (CPU only)")), ("n", self.tr("A number of layers"))):
            self.offload.addItem(text, word)
        self.layers = QSpinBox(minimum=1, maximum=1024, value=int(settings.gpu_offload) if settings.gpu_offload.isdigit() else 16)
        self.offload.setCurrentIndex(self.offload.findData("n" if settings.gpu_offload.isdigit() else settings.gpu_offload))
        self.offload.currentIndexChanged.connect(self._on_offload_changed)
        offload_row = QHBoxLayout()
        offload_row.addWidget(self.offload, 1)
        offload_row.addWidget(self.layers)
        self.no_gpu = QLabel(self.tr("This build runs on the CPU"))
        offload_row.addWidget(self.no_gpu)
        self.offload.setEnabled(has_gpu)
        self.no_gpu.setVisible(not has_gpu)
        self._on_offload_changed()

        self.n_ctx = QSpinBox(minimum=AUTOMATIC, maximum=trained_n_ctx or 1_048_576, singleStep=1024, value=settings.n_ctx or AUTOMATIC)
        self.n_ctx.setSpecialValueText(self.tr("Automatic ({n} tokens)").format(n=default_n_ctx) if default_n_ctx else self.tr("Automatic"))
        tip = self.tr("Automatic: the context the model was trained for, as far as memory allows")
        if trained_n_ctx:
            tip += "\n" + self.tr("This model was trained for {n} tokens: a longer context is not offered, as its replies fall apart past it.").format(n=number(trained_n_ctx))
        self.n_ctx.setToolTip(tip)
        self.kv_type = QComboBox()
        for kind in typing.get_args(KvType):
            self.kv_type.addItem(kind, kind)
        self.kv_type.setCurrentIndex(self.kv_type.findData(settings.type_k))
        self.kv_type.setToolTip(self.tr("q8_0 halves the KV cache's memory, q4_0 quarters it, at some cost in quality"))
        self.flash_attn = QComboBox()
        for word, text in (("auto", self.tr("Auto")), ("on", self.tr("On")), ("off", self.tr("Off"))):
            self.flash_attn.addItem(text, word)
        self.flash_attn.setCurrentIndex(self.flash_attn.findData(next(w for w, v in FLASH_ATTN_WORDS.items() if v is settings.flash_attn)))
        self.flash_attn.setToolTip(self.tr("Auto: llama.cpp's choice, on. Off decodes faster on a CPU, "
                                           "but a conversation restored from the KV store may then go on a little differently"))
        self.kv_type.currentIndexChanged.connect(self._exclude_unloadable_pairs)
        self.flash_attn.currentIndexChanged.connect(self._exclude_unloadable_pairs)
        self._exclude_unloadable_pairs()

        self.draft = QComboBox()
        self.draft.addItem(self.tr("Auto (the smallest compatible model on disk)"), "auto")
        self.draft.addItem(self.tr("None"), "none")
        items = self.draft.model()
        assert isinstance(items, QStandardItemModel)  # a QComboBox's own model, whose items can be turned off
        for option in draft_options:
            self.draft.addItem(os.path.basename(option.path), option.path)
            index = self.draft.count() - 1
            if not option.compatible:
                items.item(index).setEnabled(False)
                self.draft.setItemData(index, "; ".join(option.reasons), Qt.ItemDataRole.ToolTipRole)  # why it cannot draft
        chosen = self.draft.findData(settings.draft)
        if chosen < 0:  # a file that is not on the list (any more): keep it, named by its path
            self.draft.addItem(settings.draft, settings.draft)
            chosen = self.draft.count() - 1
        self.draft.setCurrentIndex(chosen)

        self.speculation = QComboBox()
        for mode, text in (("auto", self.tr("Auto")), ("lookup", self.tr("Prompt lookup")), ("draft", self.tr("Draft model")),
                           ("both", self.tr("Prompt lookup and draft model")), ("off", self.tr("Off"))):
            self.speculation.addItem(text, mode)
        self.speculation.setCurrentIndex(self.speculation.findData(settings.speculation))
        self.n_seq = QSpinBox(minimum=1, maximum=64, value=settings.n_seq)
        self.n_seq.setToolTip(self.tr("Conversations that can write replies at the same time. Each keeps a context of its own in memory, "
                                      "so fewer leave more memory to the rest of the machine"))
        self.threads = QSpinBox(minimum=AUTOMATIC, maximum=512, value=settings.n_threads or AUTOMATIC)
        self.threads.setSpecialValueText(self.tr("Automatic (%n thread(s), one per core)", "", default_threads()))
        self.threads.setToolTip(self.tr("More threads than cores slow replies down: at every layer, the threads wait for each other"))

        self.split_mode = QComboBox(self)  # parented: only one of these and the note goes in the form
        for mode, text in (("layer", self.tr("Whole layers on each device")), ("row", self.tr("Rows of each layer across devices")),
                           ("none", self.tr("One device only (the main one)"))):
            self.split_mode.addItem(text, mode)
        self.split_mode.setCurrentIndex(self.split_mode.findData(settings.split_mode))
        self.main_gpu = QComboBox(self)
        for index, name in enumerate(gpu_names):
            self.main_gpu.addItem(f"{index}: {name}", index)
        if self.main_gpu.findData(settings.main_gpu) < 0:  # a device that is not here (any more): kept, as it is stored
            self.main_gpu.addItem(self.tr("{index}: not on this machine").format(index=settings.main_gpu), settings.main_gpu)
        self.main_gpu.setCurrentIndex(self.main_gpu.findData(settings.main_gpu))
        several = len(gpu_names) > 1
        self.split_note = QLabel(self.tr("Splitting a model across GPU devices needs more than one; this machine has {n}.").format(n=len(gpu_names)), self)
        self.split_note.setWordWrap(True)

        form.addRow(self.tr("GPU offload"), offload_row)
        if several:
            form.addRow(self.tr("Across GPU devices"), self.split_mode)
            form.addRow(self.tr("Main GPU device"), self.main_gpu)
        else:
            form.addRow(self.tr("Across GPU devices"), self.split_note)
        self.split_mode.setVisible(several)
        self.main_gpu.setVisible(several)
        self.split_note.setVisible(not several)
        form.addRow(self.tr("Context length (tokens)"), self.n_ctx)
        form.addRow(self.tr("KV cache type"), self.kv_type)
        form.addRow(self.tr("Flash attention"), self.flash_attn)
        form.addRow(self.tr("Draft model"), self.draft)
        form.addRow(self.tr("Speculative decoding"), self.speculation)
        form.addRow(self.tr("Parallel replies"), self.n_seq)
        form.addRow(self.tr("CPU threads"), self.threads)
        for label, field in ((self.tr("GPU offload"), self.offload), (self.tr("Context length"), self.n_ctx), (self.tr("KV cache type"), self.kv_type),
                             (self.tr("Flash attention"), self.flash_attn),
                             (self.tr("Draft model"), self.draft), (self.tr("Speculative decoding"), self.speculation),
                             (self.tr("Parallel replies"), self.n_seq), (self.tr("CPU threads"), self.threads),
                             (self.tr("Across GPU devices"), self.split_mode), (self.tr("Main GPU device"), self.main_gpu)):
            field.setAccessibleName(label)
        layout.addLayout(form)
        buttons = describe_buttons(QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _on_offload_changed(self) -> None:
        self.layers.setVisible(self.offload.currentData() == "n")

    def _exclude_unloadable_pairs(self) -> None:
        """Off for flash attention only with an f16 KV cache, a quantized KV cache only with flash attention not off."""
        quantized = self.kv_type.currentData() != "f16"
        flash_off = self.flash_attn.currentData() == "off"
        kv_items, flash_items = self.kv_type.model(), self.flash_attn.model()
        assert isinstance(kv_items, QStandardItemModel) and isinstance(flash_items, QStandardItemModel)
        off = self.flash_attn.findData("off")
        flash_items.item(off).setEnabled(not quantized)
        self.flash_attn.setItemData(off, self.tr("A quantized KV cache needs flash attention: make the KV cache type f16 first") if quantized else None,
                                    Qt.ItemDataRole.ToolTipRole)
        for index in range(self.kv_type.count()):
            if self.kv_type.itemData(index) != "f16":
                kv_items.item(index).setEnabled(not flash_off)
                self.kv_type.setItemData(index, self.tr("A quantized KV cache needs flash attention: make it Auto or On first") if flash_off else None,
                                         Qt.ItemDataRole.ToolTipRole)

    def result_settings(self) -> LoadSettings:
        offload = self.offload.currentData()
        return LoadSettings(
            gpu_offload=str(self.layers.value()) if offload == "n" else offload,
            n_ctx=self.n_ctx.value() or None,
            type_k=self.kv_type.currentData(),
            type_v=self.kv_type.currentData(),
            flash_attn=FLASH_ATTN_WORDS[self.flash_attn.currentData()],
            draft=self.draft.currentData(),
            speculation=self.speculation.currentData(),
            n_seq=self.n_seq.value(),
            n_threads=self.threads.value() or None,
            split_mode=typing.cast(SplitMode, self.split_mode.currentData()),
            main_gpu=int(self.main_gpu.currentData()),
        )
