"""Per-conversation settings: system prompt and sampling; remembered with the conversation."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QPlainTextEdit, QSpinBox, QVBoxLayout, QWidget

from app.chat.controller import ConversationSettings
from app.ui.accessibility import describe_buttons

MODEL_DEFAULT = 0  # the context spin box's value for "the model's setting"


class ConversationSettingsDialog(QDialog):
    def __init__(self, system_prompt: str, settings: ConversationSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Conversation settings"))
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.system_prompt = QPlainTextEdit(system_prompt)
        self.system_prompt.setPlaceholderText(self.tr("e.g. You are a concise assistant."))
        self.system_prompt.setFixedHeight(100)
        self.system_prompt.setTabChangesFocus(True)
        self.system_prompt.setAccessibleDescription(self.tr("Instructions the model reads before the conversation"))
        self.temperature = QDoubleSpinBox(minimum=0.0, maximum=2.0, singleStep=0.05, decimals=2, value=settings.temperature)
        self.top_p = QDoubleSpinBox(minimum=0.01, maximum=1.0, singleStep=0.05, decimals=2, value=settings.top_p)
        self.min_p = QDoubleSpinBox(minimum=0.0, maximum=1.0, singleStep=0.01, decimals=2, value=settings.min_p)
        self.min_p.setToolTip(self.tr("Leave out tokens less likely than this fraction of the likeliest one (0: off)"))
        self.repeat_penalty = QDoubleSpinBox(minimum=1.0, maximum=2.0, singleStep=0.05, decimals=2, value=settings.repeat_penalty)
        self.repeat_penalty.setToolTip(self.tr("Make tokens used in the last 64 less likely (1: off)"))
        self.max_tokens = QSpinBox(minimum=1, maximum=32768, singleStep=64, value=settings.max_tokens)
        # The lowest value stands for "the model's load settings decide" (Model ▸ Load settings…).
        self.n_ctx = QSpinBox(minimum=MODEL_DEFAULT, maximum=131072, singleStep=512, value=settings.n_ctx or MODEL_DEFAULT)
        self.n_ctx.setSpecialValueText(self.tr("The model's setting"))
        self.n_ctx.setToolTip(self.tr("Changing it reloads the model with the new context size"))
        self.speculation = QComboBox()
        for mode, text in ((None, self.tr("The model's setting")), ("auto", self.tr("Auto")), ("lookup", self.tr("Prompt lookup")),
                           ("draft", self.tr("Draft model")), ("both", self.tr("Prompt lookup and draft model")), ("off", self.tr("Off"))):
            self.speculation.addItem(text, mode)
        self.speculation.setCurrentIndex(max(0, self.speculation.findData(settings.speculation)))
        self.speculation.setToolTip(self.tr("Speculative decoding for this conversation's replies; the draft modes need a draft model loaded"))
        self.speculation.setAccessibleName(self.tr("Speculative decoding"))
        self.speculation.setAccessibleDescription(self.speculation.toolTip())
        self.temperature.setAccessibleDescription(self.tr("0 always picks the likeliest word; higher values vary more"))
        self.top_p.setAccessibleDescription(self.tr("Pick only among the likeliest words that together make up this share"))
        self.min_p.setAccessibleDescription(self.min_p.toolTip())
        self.repeat_penalty.setAccessibleDescription(self.repeat_penalty.toolTip())
        self.max_tokens.setAccessibleDescription(self.tr("The longest a reply may get"))
        self.n_ctx.setAccessibleDescription(self.n_ctx.toolTip())
        form.addRow(self.tr("System prompt"), self.system_prompt)
        form.addRow(self.tr("Temperature"), self.temperature)
        form.addRow(self.tr("Top p"), self.top_p)
        form.addRow(self.tr("Min p"), self.min_p)
        form.addRow(self.tr("Repeat penalty"), self.repeat_penalty)
        form.addRow(self.tr("Max tokens per reply"), self.max_tokens)
        form.addRow(self.tr("Context size (tokens)"), self.n_ctx)
        form.addRow(self.tr("Speculative decoding"), self.speculation)
        layout.addLayout(form)
        buttons = describe_buttons(QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel))
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
            n_ctx=self.n_ctx.value() if self.n_ctx.value() != MODEL_DEFAULT else None,
            seed=self._seed,
            speculation=self.speculation.currentData(),
        )
