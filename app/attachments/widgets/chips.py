"""Attachment chips: the composer's (removable, with their size in tokens) and a sent message's (a picture as a thumbnail).

Every part takes the keyboard: Tab reaches a chip's remove button (Delete or Backspace there removes it
too) and a thumbnail (Enter or Space opens the picture whole).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QIcon, QKeyEvent, QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from app.attachments import words
from app.attachments.pending import Pending, PendingAttachments
from app.attachments.widgets.image_view import ImageViewer
from app.storage.attachments import StoredAttachment
from app.storage.store import StoreUnavailable
from app.ui import icons
from app.ui.accessibility import discard
from app.ui.flow_layout import FlowLayout

THUMBNAIL_SHOWN_PX = 96
CHIP_THUMBNAIL_PX = 24
CHIP_NAME_PX = 200  # the most a chip's file name takes: a longer one is cut in the middle ("…"), whole in the chip's tooltip


def _pixmap(png: bytes) -> QPixmap:
    pixmap = QPixmap()
    pixmap.loadFromData(png)
    return pixmap


class RemoveButton(QToolButton):
    """A chip's ×: Delete and Backspace remove too, where the focus is."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.click()
            return
        super().keyPressEvent(event)


class Chip(QFrame):
    """One attachment: a small picture for an image, its name and size, and (in the composer) a remove button."""

    sig_remove = Signal()

    def __init__(self, name: str, attachment: StoredAttachment | None, removable: bool, parent: QWidget | None = None, searchable_part: float | None = None):
        super().__init__(parent)
        self.setObjectName("attachmentChip")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 3, 4, 3)
        layout.setSpacing(6)
        if attachment is not None and attachment.thumbnail:
            picture = QLabel()
            picture.setPixmap(_pixmap(attachment.thumbnail).scaled(CHIP_THUMBNAIL_PX, CHIP_THUMBNAIL_PX, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation))
            layout.addWidget(picture)
        whole = words.chip_label(name, attachment, searchable_part)
        shorten = lambda text: self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, CHIP_NAME_PX)  # noqa: E731
        self.label = QLabel(words.chip_label(name, attachment, searchable_part, shorten))
        detail = words.chip_detail(attachment, searchable_part)
        self.setToolTip(f"{whole}\n{detail}")
        self.setAccessibleName(whole)
        self.setAccessibleDescription(detail)
        layout.addWidget(self.label)
        self.remove_button: RemoveButton | None = None
        if removable:
            button = RemoveButton()
            button.setObjectName("chipRemove")
            button.setIcon(icons.icon("close"))
            button.setIconSize(QSize(12, 12))
            button.setAutoRaise(True)
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            tip = self.tr("Remove {name} from the message").format(name=name)
            button.setToolTip(tip)
            button.setAccessibleName(self.tr("Remove {name}").format(name=name))
            button.setAccessibleDescription(self.tr("The file is not sent with this message (Delete)"))
            button.clicked.connect(self.sig_remove)
            layout.addWidget(button)
            self.remove_button = button
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)


class PendingChips(QWidget):
    """The composer's chips, rendering a PendingAttachments model (one row of chips above the message box)."""

    sig_remove = Signal(int)  # the attachment's key
    sig_focus_order_changed = Signal()

    def __init__(self, model: PendingAttachments, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = model
        self.chips: list[Chip] = []
        self._row = FlowLayout(self)  # chips wrap onto more lines: a row of them set the window's minimum width
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            signal.connect(self._rebuild)
        model.dataChanged.connect(self._rebuild)
        self._rebuild()

    def _rebuild(self, *_args: object) -> None:
        had_focus = self.window().focusWidget()  # the window's, whether or not it is the active one
        focused = next((i for i, chip in enumerate(self.chips) if chip.remove_button is not None and chip.remove_button is had_focus), -1)
        for chip in self.chips:
            self._row.removeWidget(chip)
            discard(chip)
        self.chips = []
        for row in range(self.model.rowCount()):
            item: Pending = self.model.data(self.model.index(row), Qt.ItemDataRole.UserRole + 40)
            chip = Chip(item.name, item.attachment, removable=True, searchable_part=item.searchable_part)
            chip.sig_remove.connect(lambda key=item.key: self.sig_remove.emit(key))
            self._row.insertWidget(row, chip)
            self.chips.append(chip)
        self.setVisible(bool(self.chips))
        if focused >= 0 and self.chips:  # removing one with the keyboard leaves the focus on its neighbour
            button = self.chips[min(focused, len(self.chips) - 1)].remove_button
            if button is not None:
                button.setFocus(Qt.FocusReason.OtherFocusReason)
        self.sig_focus_order_changed.emit()

    def focusables(self) -> list[QWidget]:
        return [chip.remove_button for chip in self.chips if chip.remove_button is not None]


class Thumbnail(QToolButton):
    """A picture in a message: click (or Enter, or Space) to see it whole."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.click()  # a tool button takes Space only; Enter is what a keyboard user tries first
            return
        super().keyPressEvent(event)

    def __init__(self, attachment: StoredAttachment, image_source: Callable[[str], bytes | None], parent: QWidget | None = None):
        super().__init__(parent)
        self.attachment = attachment
        self.image_source = image_source
        self.setObjectName("messageThumbnail")
        self.setIcon(QIcon(_pixmap(attachment.thumbnail)))
        self.setIconSize(QSize(THUMBNAIL_SHOWN_PX, THUMBNAIL_SHOWN_PX))
        self.setAutoRaise(True)
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setToolTip(self.tr("{name}: click to see it whole").format(name=attachment.name))
        self.setAccessibleName(self.tr("Picture {name}").format(name=attachment.name))
        self.setAccessibleDescription(self.tr("Opens the picture at full size"))
        self.viewer: ImageViewer | None = None
        self.clicked.connect(self.open_viewer)

    def open_viewer(self) -> ImageViewer:
        try:
            data = self.image_source(self.attachment.id)
        except StoreUnavailable:  # the database refuses reads now: the thumbnail, larger
            data = None
        data = data or self.attachment.thumbnail  # the thumbnail, if the picture itself is gone
        self.viewer = ImageViewer(self.attachment.name, data, self.window())
        self.viewer.open()
        return self.viewer


class MessageAttachments(QWidget):
    """A sent message's attachments: documents as chips, pictures as thumbnails."""

    def __init__(self, image_source: Callable[[str], bytes | None], parent: QWidget | None = None):
        super().__init__(parent)
        self.image_source = image_source
        self._row = FlowLayout(self)
        self._row.setContentsMargins(0, 2, 0, 2)
        self.parts: list[QWidget] = []
        self._shown: list[str] = []
        self.hide()

    def show_attachments(self, attachments: list[StoredAttachment]) -> None:
        ids = [a.id for a in attachments]
        if ids == self._shown:
            return  # the same (a streaming reply's row repaints often)
        self._shown = ids
        for old in self.parts:
            self._row.removeWidget(old)
            discard(old)
        self.parts = []
        for attachment in attachments:
            part: QWidget = Thumbnail(attachment, self.image_source) if attachment.kind == "image" and attachment.thumbnail else Chip(attachment.name, attachment, removable=False)
            self._row.insertWidget(len(self.parts), part)
            self.parts.append(part)
        self.setVisible(bool(self.parts))

    def thumbnails(self) -> list[Thumbnail]:
        return [p for p in self.parts if isinstance(p, Thumbnail)]
