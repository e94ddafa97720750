"""A picture whole, in a window of its own: scaled down to fit the window (never up, never cropped); Esc closes it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPixmap, QResizeEvent
from PySide6.QtWidgets import QDialog, QLabel, QSizePolicy, QVBoxLayout, QWidget


class ImageViewer(QDialog):
    def __init__(self, name: str, data: bytes, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(name)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.pixmap = QPixmap()
        self.pixmap.loadFromData(data)
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)  # it follows the window, not the other way round
        self.picture.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.picture.setAccessibleName(self.tr("Picture {name}").format(name=name))
        self.picture.setAccessibleDescription(self.tr("The picture at full size; Esc closes it"))
        if self.pixmap.isNull():
            self.picture.setText(self.tr("This picture cannot be shown (its stored copy is damaged)."))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.picture)
        screen = QGuiApplication.primaryScreen()
        size = self.pixmap.size() if not self.pixmap.isNull() else self.picture.sizeHint()
        if screen is not None:
            size = size.boundedTo(screen.availableGeometry().size() * 0.9)
        self.resize(max(size.width(), 240), max(size.height(), 160))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.pixmap.isNull():
            return
        room = self.picture.size()
        fits = self.pixmap.width() <= room.width() and self.pixmap.height() <= room.height()
        self.picture.setPixmap(self.pixmap if fits else self.pixmap.scaled(room, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation))
