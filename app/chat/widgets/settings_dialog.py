"""Per-conversation settings: system prompt and sampling; remembered with the conversation."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QPlainTextEdit, QSpinBox, QVBoxLayout

from app.chat.controller import ConversationSettings


class ConversationSettingsDialog(QDialog):
    def __init__(self, system_prompt: str, settings: ConversationSettings, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Conversation settings")
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.system_prompt = QPlainTextEdit(system_prompt)
        self.system_prompt.setPlaceholderText("e.g. You are a concise assistant.")
        self.system_prompt.setFixedHeight(100)
        self.temperature = QDoubleSpinBox(minimum=0.0, maximum=2.0, singleStep=0.05, decimals=2, value=settings.temperature)
        self.top_p = QDoubleSpinBox(minimum=0.01, maximum=1.0, singleStep=0.05, decimals=2, value=settings.top_p)
        self.min_p = QDoubleSpinBox(minimum=0.0, maximum=1.0, singleStep=0.01, decimals=2, value=settings.min_p)
        self.min_p.setToolTip("Leave out tokens less likely than this fraction of the likeliest one (0: off)")
        self.repeat_penalty = QDoubleSpinBox(minimum=1.0, maximum=2.0, singleStep=0.05, decimals=2, value=settings.repeat_penalty)
        self.repeat_penalty.setToolTip("Make tokens used in the last 64 less likely (1: off)")
        self.max_tokens = QSpinBox(minimum=1, maximum=32768, singleStep=64, value=settings.max_tokens)
        self.n_ctx = QSpinBox(minimum=256, maximum=131072, singleStep=512, value=settings.n_ctx)
        self.n_ctx.setToolTip("Changing it reloads the model with the new context size")
        form.addRow("System prompt", self.system_prompt)
        form.addRow("Temperature", self.temperature)
        form.addRow("Top p", self.top_p)
        form.addRow("Min p", self.min_p)
        form.addRow("Repeat penalty", self.repeat_penalty)
        form.addRow("Max tokens per reply", self.max_tokens)
        form.addRow("Context size (tokens)", self.n_ctx)
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._seed = settings.seed

    def result_settings(self) -> tuple[str, ConversationSettings]:
        return self.system_prompt.toPlainText(), ConversationSettings(
            temperature=self.temperature.value(),
            top_p=self.top_p.value(),
            min_p=self.min_p.value(),
            repeat_penalty=self.repeat_penalty.value(),
            max_tokens=self.max_tokens.value(),
            n_ctx=self.n_ctx.value(),
            seed=self._seed,
        )
