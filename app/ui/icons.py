"""Icons from resources/icons/*.svg, drawn in the palette's text colour at every size the screen asks for."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication


def resources_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    return Path(frozen) / "resources" if frozen else Path(__file__).resolve().parents[2] / "resources"


@functools.cache
def _svg(name: str) -> str:
    return (resources_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")


class _SvgIconEngine(QIconEngine):
    """Renders the SVG at the exact device pixel size, so icons stay sharp on HiDPI screens."""

    def __init__(self, name: str, color_role: QPalette.ColorRole):
        super().__init__()
        self.name = name
        self.color_role = color_role

    def _renderer(self, mode: QIcon.Mode) -> QSvgRenderer:
        palette = QApplication.palette()
        group = QPalette.ColorGroup.Disabled if mode == QIcon.Mode.Disabled else QPalette.ColorGroup.Normal
        color = palette.color(group, self.color_role).name()
        return QSvgRenderer(QByteArray(_svg(self.name).replace("currentColor", color).encode()))

    def paint(self, painter: QPainter, rect, mode, state) -> None:
        self._renderer(mode).render(painter, QRectF(rect))

    def pixmap(self, size: QSize, mode, state) -> QPixmap:
        pixmap = QPixmap(size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        self._renderer(mode).render(painter, QRectF(0, 0, size.width(), size.height()))
        painter.end()
        return pixmap

    def scaledPixmap(self, size: QSize, mode, state, scale: float) -> QPixmap:
        pixmap = self.pixmap(QSize(int(size.width() * scale), int(size.height() * scale)), mode, state)
        pixmap.setDevicePixelRatio(scale)
        return pixmap

    def clone(self) -> "QIconEngine":
        return _SvgIconEngine(self.name, self.color_role)


def icon(name: str, color_role: QPalette.ColorRole = QPalette.ColorRole.ButtonText) -> QIcon:
    return QIcon(_SvgIconEngine(name, color_role))


def app_icon() -> QIcon:
    result = QIcon()
    for size in (16, 24, 32, 48, 64, 128, 256):
        renderer = QSvgRenderer(QByteArray(_svg("lokal").encode()))
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        renderer.render(painter)
        painter.end()
        result.addPixmap(pixmap)
    return result
