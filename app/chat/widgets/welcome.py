"""What an empty conversation shows: which model will answer, where it runs, and a few first questions.

A first start loads the starter model, a 135M model that is quick but often wrong; a user who does not know that
judges the app by its answers. So with the starter model loaded the welcome says so, and offers the catalog.
An example question goes into the message box, not straight to the model: the user sees what is sent and can
change it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.ui.accessibility import described
from app.ui.flow_layout import FlowLayout
from app.ui.wrapping_button import WrappingButton

ROOM = 560  # the welcome's widest: lines a reader takes in at a glance, in the middle of a wide window


class Welcome(QWidget):
    sig_example_chosen = Signal(str)  # an example question, for the message box
    sig_browse_models = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("welcome")
        middle = QWidget()  # as wide as the view, up to ROOM, in the middle: a word-wrapped label takes the width it is given
        middle.setMaximumWidth(ROOM)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 24, 0, 0)
        row.addStretch(0)
        row.addWidget(middle, 1)
        row.addStretch(0)
        column = QVBoxLayout(middle)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(8)
        self.heading = QLabel()
        self.heading.setObjectName("welcomeHeading")
        font = QFont(self.heading.font())
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setWeight(QFont.Weight.DemiBold)
        self.heading.setFont(font)
        self.heading.setWordWrap(True)
        self.heading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.detail = QLabel()
        self.detail.setObjectName("hint")
        self.detail.setWordWrap(True)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        column.addWidget(self.heading)
        column.addWidget(self.detail)
        self.advice_box = QFrame()
        self.advice_box.setObjectName("welcomeAdvice")
        advice_row = QHBoxLayout(self.advice_box)
        advice_row.setContentsMargins(12, 8, 8, 8)
        self.advice = QLabel()
        self.advice.setWordWrap(True)
        self.browse = QPushButton(self.tr("Browse models…"))
        described(self.browse, self.tr("Browse models"), self.tr("Find a larger model on Hugging Face, with what it needs of this machine"))
        self.browse.clicked.connect(self.sig_browse_models)
        advice_row.addWidget(self.advice, 1)
        advice_row.addWidget(self.browse, 0, Qt.AlignmentFlag.AlignVCenter)
        column.addSpacing(4)
        column.addWidget(self.advice_box)
        self.try_label = QLabel(self.tr("Try one of these:"))
        self.try_label.setObjectName("hint")
        column.addSpacing(8)
        column.addWidget(self.try_label)
        examples = QWidget()
        flow = FlowLayout(examples)
        self.examples: list[WrappingButton] = []
        for text in (
            self.tr("Explain how a rainbow forms, in three sentences."),
            self.tr("Write a Python function that checks whether a word is a palindrome."),
            self.tr("Draft a short, polite email asking to move a meeting to Friday."),
        ):
            button = WrappingButton(text)
            button.setObjectName("welcomeExample")
            button.setToolTip(self.tr("Put this question in the message box"))
            button.clicked.connect(lambda _checked=False, text=text: self.sig_example_chosen.emit(text))
            flow.addWidget(button)
            self.examples.append(button)
        column.addWidget(examples)
        self.show_no_model()

    def show_model(self, name: str, quantization: str, on_gpu: bool, starter: bool) -> None:
        """A model of the runtime answers (`starter`: the small one a first start loads)."""
        self.heading.setText(self.tr("Chat with {model}").format(model=name))
        place = self.tr("on the GPU") if on_gpu else self.tr("on the CPU")
        self.detail.setText(self.tr("{quantization}, {place} of this machine. Your messages stay here.").format(quantization=quantization, place=place))
        self.advice.setText(self.tr("This is the small starter model: quick, but it often gets facts wrong. A larger model answers much better."))
        self.advice_box.setVisible(starter)

    def show_remote(self, name: str) -> None:
        """Replies come from a remote endpoint the user added."""
        self.heading.setText(self.tr("Chat with {model}").format(model=name))
        self.detail.setText(self.tr("Replies come from the remote endpoint you chose: your messages are sent there."))
        self.advice_box.hide()

    def show_loading(self, file: str) -> None:
        self.heading.setText(self.tr("Getting the model ready…"))
        self.detail.setText(self.tr("Loading {file}. You can write your first message meanwhile.").format(file=file))
        self.advice_box.hide()

    def show_fetching(self, status: str) -> None:
        """The starter model is being fetched (a first start): `status` says how far."""
        self.heading.setText(self.tr("Getting the model ready…"))
        self.detail.setText(status)
        self.advice_box.hide()

    def show_no_model(self) -> None:
        self.heading.setText(self.tr("No model is loaded"))
        self.detail.setText(self.tr("Choose one in the Model menu, or open a GGUF file. Your messages stay on this machine."))
        self.advice.setText(self.tr("No model on this machine yet? Find one that fits it."))
        self.advice_box.show()

    def focusables(self) -> list[QWidget]:
        """Its buttons, in reading order, for the window's Tab order."""
        buttons: list[QWidget] = [self.browse] if self.advice_box.isVisibleTo(self) else []
        return buttons + list(self.examples)
