"""Per-conversation settings: system prompt, sampling, reply length and thinking; remembered with the conversation.

A reply runs until the model stops, within the context, unless a length is set here. Thinking (for models
that think before they answer: Qwen3, DeepSeek-R1, gpt-oss…) is the model's default, on, off, or on with a
budget of thinking tokens; it is sent as enable_thinking and reasoning_budget, which models without
thinking ignore.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QPlainTextEdit, QSpinBox, QVBoxLayout, QWidget

from app.chat.controller import ConversationSettings
from app.ui.accessibility import describe_buttons

MODEL_DEFAULT = 0  # the context spin box's value for "the model's setting"
UNTIL_STOP = 0  # the reply length spin box's value for "until the model stops" (max_tokens None)
NO_LIMIT = 0  # the thinking budget spin box's value for "no limit" (reasoning_budget None)


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
        self.max_tokens = QSpinBox(minimum=UNTIL_STOP, maximum=131072, singleStep=64, value=settings.max_tokens or UNTIL_STOP)
        self.max_tokens.setSpecialValueText(self.tr("Until the model stops"))
        self.max_tokens.setToolTip(self.tr("A reply cut by this limit, or by a full context, can be continued"))
        self.thinking = QComboBox()
        for choice, text in ((None, self.tr("The model's default")), ("on", self.tr("On")), ("off", self.tr("Off"))):
            self.thinking.addItem(text, choice)
        self.thinking.setCurrentIndex(max(0, self.thinking.findData(settings.thinking)))
        self.thinking.setToolTip(self.tr("Whether a model that can think before it answers does so (models that cannot ignore it)"))
        self.thinking.setAccessibleName(self.tr("Thinking"))
        self.thinking.setAccessibleDescription(self.thinking.toolTip())
        self.reasoning_budget = QSpinBox(minimum=NO_LIMIT, maximum=131072, singleStep=256, value=settings.reasoning_budget or NO_LIMIT)
        self.reasoning_budget.setSpecialValueText(self.tr("No limit"))
        self.reasoning_budget.setSuffix(self.tr(" tokens"))
        self.reasoning_budget.setToolTip(self.tr("After this many thinking tokens the model stops thinking and answers"))
        self.reasoning_budget.setAccessibleDescription(self.reasoning_budget.toolTip())
        self.thinking.currentIndexChanged.connect(lambda _i: self.reasoning_budget.setEnabled(self.thinking.currentData() != "off"))
        self.reasoning_budget.setEnabled(settings.thinking != "off")
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
        self.max_tokens.setAccessibleDescription(self.tr("The longest a reply may get; by default it runs until the model stops, within the context"))
        self.n_ctx.setAccessibleDescription(self.n_ctx.toolTip())
        form.addRow(self.tr("System prompt"), self.system_prompt)
        form.addRow(self.tr("Temperature"), self.temperature)
        form.addRow(self.tr("Top p"), self.top_p)
        form.addRow(self.tr("Min p"), self.min_p)
        form.addRow(self.tr("Repeat penalty"), self.repeat_penalty)
        form.addRow(self.tr("Max tokens per reply"), self.max_tokens)
        form.addRow(self.tr("Context size (tokens)"), self.n_ctx)
        form.addRow(self.tr("Speculative decoding"), self.speculation)
        form.addRow(self.tr("Thinking"), self.thinking)
        form.addRow(self.tr("Thinking budget"), self.reasoning_budget)
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
            max_tokens=self.max_tokens.value() if self.max_tokens.value() != UNTIL_STOP else None,
            n_ctx=self.n_ctx.value() if self.n_ctx.value() != MODEL_DEFAULT else None,
            seed=self._seed,
            speculation=self.speculation.currentData(),
            thinking=self.thinking.currentData(),
            reasoning_budget=self.reasoning_budget.value() if self.reasoning_budget.value() != NO_LIMIT else None,
        )
