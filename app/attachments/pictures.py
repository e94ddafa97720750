"""Pictures in the window: a thumbnail kept with the message, the picture itself read for the full view."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QImage

THUMBNAIL_PX = 160  # the longer side of a thumbnail in a message


def decode(data: bytes) -> QImage | None:
    """The picture in `data`, or None when Qt cannot decode it (a broken or unknown file)."""
    image = QImage.fromData(QByteArray(data))
    return None if image.isNull() else image


def png_bytes(image: QImage) -> bytes:
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # PySide6 takes str here; its stubs say bytes, which it refuses
    return bytes(buffer.data().data())


def thumbnail(image: QImage, px: int = THUMBNAIL_PX) -> bytes:
    """A PNG of at most `px` on its longer side (a small picture is kept as it is)."""
    if max(image.width(), image.height()) > px:
        image = image.scaled(px, px, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)
    return png_bytes(image)
