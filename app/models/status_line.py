"""The status bar's lasting parts: the runtime's state, a model's loading progress, and the model in use
(its name, quantization and backend; its file, context and load time in the tooltip).

ModelStatus keeps them, and the model button's name, in step with the runtime and its model: a load
that failed, a crash and the recovery after it are also said in the window's banner (sig_problem).
"""

from __future__ import annotations

import os

from typing import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QStatusBar, QWidget

from app.metrics import figures
from app.models.session import ModelSession
from app.runtime_link import ConnectionState, RuntimeLink
from app.ui.elided_label import ElidedLabel
from app.ui.top_bar import ModelButton
from runtime.protocol import ModelLoadResult


class StatusLine(QObject):
    def __init__(self, bar: QStatusBar):
        super().__init__(bar)
        self.state_label = QLabel()
        self.model_label = ElidedLabel(self.tr("No model loaded"))  # its tooltip: the file, context and load time
        self.load_progress = QProgressBar()
        self.load_progress.setRange(0, 1000)
        self.load_progress.setMaximumWidth(180)
        self.load_progress.setTextVisible(False)
        self.load_progress.hide()
        self.extras = QWidget()  # other lasting work's widgets (an import's progress), left of the model's
        self._extras_layout = QHBoxLayout(self.extras)
        self._extras_layout.setContentsMargins(0, 0, 12, 0)
        bar.addWidget(self.state_label)
        # A message covers the state while it shows. Qt hides the state itself only if it is on screen when the message
        # comes: one said before the window first shows ("Fetching the starter model…") was drawn over it.
        bar.messageChanged.connect(lambda message: self.state_label.setHidden(bool(message)))
        bar.addPermanentWidget(self.extras)
        bar.addPermanentWidget(self.load_progress)
        bar.addPermanentWidget(self.model_label)

    def add_lasting(self, widget: QWidget) -> None:
        self._extras_layout.addWidget(widget)

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


class ModelStatus(QObject):
    sig_problem = Signal(str)  # a load that failed, a crash, a recovery: for the window's banner

    def __init__(self, line: StatusLine, model_button: ModelButton, session: ModelSession, link: RuntimeLink,
                 remote_model: Callable[[], str | None]):
        super().__init__(line)
        self.line, self.model_button, self.session, self.link = line, model_button, session, link
        self._remote_model = remote_model  # the remote model replies come from; None: the runtime's
        self._recovering = False  # the runtime crashed and restarts: say so once the model is back
        session.sig_loading.connect(line.show_loading)
        session.sig_progress.connect(line.show_progress)
        session.sig_loaded.connect(self._on_loaded)
        session.sig_failed.connect(self._on_failed)
        link.sig_crashed.connect(self._on_crashed)

    def show_model(self) -> str:
        """Name the loaded model in the status line, and on the model button while replies come from it; its name."""
        info = self.session.loaded
        if info is None:
            return ""
        name = self.session.display_name
        self.line.show_model(info, name, self.link.info.backend.upper() if self.link.info else "?")
        if self._remote_model() is None:
            self.model_button.set_model_name(f"{name} · {info.quantization}")
        return name

    def show_reply_model(self) -> None:
        """Replies now come from elsewhere (a remote model, or the runtime's again): the model button names theirs."""
        remote = self._remote_model()
        if remote is not None:
            self.model_button.set_model_name(remote)
        elif not self.show_model():
            self.model_button.set_model_name(self.tr("No model"))

    def _on_loaded(self, _info: ModelLoadResult) -> None:
        self.line.end_progress()
        name = self.show_model()
        if self._recovering:
            self._recovering = False
            self.sig_problem.emit(self.tr("Recovered: the runtime was restarted and {model} is loaded again. The interrupted reply was kept.").format(model=name))

    def _on_failed(self, path: str, message: str) -> None:
        self.line.end_progress()
        if self.session.loaded is None:
            self.line.show_no_model()
        self.sig_problem.emit(self.tr("Could not load {file}: {reason}").format(file=os.path.basename(path), reason=message))

    def _on_crashed(self, description: str) -> None:
        self._recovering = self.link.auto_restart
        suffix = "\n" + self.tr("Restarting it and loading the model again…") if self.link.auto_restart else ""
        self.sig_problem.emit(description + suffix)
        self.line.show_no_model()
