"""The status bar's lasting parts: the runtime's state, a model's loading progress, and the model in use
(its name, quantization and backend; its file, context and load time in the tooltip)."""

from __future__ import annotations

import os

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar

from app.metrics import figures
from app.runtime_link import ConnectionState
from runtime.protocol import ModelLoadResult


class StatusLine(QObject):
    def __init__(self, bar: QStatusBar):
        super().__init__(bar)
        self.state_label = QLabel()
        self.model_label = QLabel(self.tr("No model loaded"))
        self.load_progress = QProgressBar()
        self.load_progress.setRange(0, 1000)
        self.load_progress.setMaximumWidth(180)
        self.load_progress.setTextVisible(False)
        self.load_progress.hide()
        bar.addWidget(self.state_label)
        bar.addPermanentWidget(self.load_progress)
        bar.addPermanentWidget(self.model_label)

    def show_state(self, state: ConnectionState, generating: bool, waiting: int) -> None:
        """The runtime's state; "Generating…" while the reply on screen streams; how many requests wait."""
        text = self.state_text(state)
        if state == ConnectionState.BUSY and generating:
            text = self.tr("Generating…")
        if waiting:
            text += " " + self.tr("(%n waiting)", "", waiting)
        self.state_label.setText(text)

    def state_text(self, state: ConnectionState) -> str:
        return {
            ConnectionState.STOPPED: self.tr("Runtime stopped"),
            ConnectionState.STARTING: self.tr("Starting the runtime…"),
            ConnectionState.READY: self.tr("Ready"),
            ConnectionState.BUSY: self.tr("Working…"),
            ConnectionState.CRASHED: self.tr("Runtime crashed"),
            ConnectionState.RESTARTING: self.tr("Restarting the runtime…"),
        }.get(state, state.value)

    def show_loading(self, path: str) -> None:
        self.show_progress(0.0)
        self.model_label.setText(self.tr("Loading {file}…").format(file=os.path.basename(path)))

    def show_progress(self, fraction: float) -> None:
        """A load's or the starter model's fetch's progress, 0..1."""
        self.load_progress.setValue(int(fraction * 1000))
        self.load_progress.show()

    def end_progress(self) -> None:
        self.load_progress.hide()

    def show_model(self, info: ModelLoadResult, name: str, backend: str) -> None:
        note = figures.template_fallback_note()
        warning = f"  ·  ⚠ {note}" if info.chat_template_error else ""
        self.model_label.setText(f"{name}  ·  {info.quantization}  ·  {backend}{warning}")
        tip = self.tr("{path}\ncontext {n_ctx} tokens, loaded in {ms} ms").format(path=info.path, n_ctx=info.n_ctx, ms=round(info.load_ms))
        self.model_label.setToolTip(tip + (f"\n{note}: {info.chat_template_error}" if info.chat_template_error else ""))

    def show_no_model(self) -> None:
        self.load_progress.hide()
        self.model_label.setText(self.tr("No model loaded"))
