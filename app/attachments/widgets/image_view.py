"""A picture at full size (scaled down to the screen when it is larger), in a window of its own; Esc closes it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QScrollArea, QVBoxLayout, QWidget


class ImageViewer(QDialog):
    def __init__(self, name: str, data: bytes, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(name)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.pixmap = QPixmap()
        self.pixmap.loadFromData(data)
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setAccessibleName(name)
        if self.pixmap.isNull():
            self.picture.setText(self.tr("This picture cannot be shown (its stored copy is damaged)."))
        else:
            self.picture.setPixmap(self.pixmap)
        scroll = QScrollArea()
        scroll.setWidget(self.picture)
        scroll.setWidgetResizable(True)
        scroll.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        scroll.setAccessibleName(self.tr("Picture {name}").format(name=name))
        scroll.setAccessibleDescription(self.tr("The picture at full size; Esc closes it"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() * 0.9 if screen is not None else None
        size = self.pixmap.size() if not self.pixmap.isNull() else self.picture.sizeHint()
        if room is not None:
            size = size.boundedTo(room)
        self.resize(max(size.width(), 240), max(size.height(), 160))
