"""Icons from app/resources/icons/*.svg, drawn in the palette's text colour at every size the screen asks for."""

from __future__ import annotations

import functools
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication


def resources_dir() -> Path:
    # Package data (app/resources): in a checkout, an installed copy and the frozen bundle alike.
    return Path(__file__).resolve().parents[1] / "resources"


@functools.cache
def _svg(name: str) -> str:
    return (resources_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")


class _SvgIconEngine(QIconEngine):
    """Renders the SVG at the exact device pixel size, so icons stay sharp on HiDPI screens."""

    def __init__(self, name: str, color_role: QPalette.ColorRole):
        super().__init__()
        self.name = name
        self.color_role = color_role

    def _color(self, mode: QIcon.Mode) -> str:
        group = QPalette.ColorGroup.Disabled if mode == QIcon.Mode.Disabled else QPalette.ColorGroup.Normal
        return QApplication.palette().color(group, self.color_role).name()

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        painter.drawPixmap(rect, self.pixmap(rect.size(), mode, state))

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        # Parsing and rendering SVG on every paint is slow; one pixmap per name, size and colour is kept.
        return _render(self.name, size.width(), size.height(), self._color(mode))

    def scaledPixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float) -> QPixmap:
        pixmap = self.pixmap(QSize(int(size.width() * scale), int(size.height() * scale)), mode, state)
        pixmap.setDevicePixelRatio(scale)
        return pixmap

    def clone(self) -> "QIconEngine":
        return _SvgIconEngine(self.name, self.color_role)


@functools.lru_cache(maxsize=512)
def _render(name: str, width: int, height: int, color: str) -> QPixmap:
    renderer = QSvgRenderer(QByteArray(_svg(name).replace("currentColor", color).encode()))
    pixmap = QPixmap(max(width, 1), max(height, 1))
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    renderer.render(painter, QRectF(0, 0, width, height))
    painter.end()
    return pixmap


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
