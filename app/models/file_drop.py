"""GGUF files dropped on the window: the first is added to the local models (the runtime checks and remembers it),
and loads once it is listed. A drop on the message box is the composer's (attachments)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, QObject
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QWidget

from app.models.local_model import LocalModels


class ModelFileDrop(QObject):
    def __init__(self, window: QWidget, local_models: LocalModels):
        super().__init__(window)
        self.local_models = local_models
        window.setAcceptDrops(True)
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QDragEnterEvent) and _gguf_paths(event.mimeData()):
            event.acceptProposedAction()
            return True
        if isinstance(event, QDropEvent) and event.type() == QEvent.Type.Drop and (paths := _gguf_paths(event.mimeData())):
            event.acceptProposedAction()
            self.local_models.add_file(paths[0])  # once the runtime has checked and remembered it, it loads
            return True
        return False


def _gguf_paths(mime: QMimeData) -> list[str]:
    return [url.toLocalFile() for url in mime.urls() if url.toLocalFile().lower().endswith(".gguf")]
