"""CatalogUi: one object the main window owns to offer the model browser and the downloads panel.

    self.catalog = CatalogUi(self.link, self)
    menu.addAction("Browse Hugging Face models…", self.catalog.open_browser)
    menu.addAction("Downloads", self.catalog.show_downloads)
    self.catalog.sig_model_downloaded.connect(...)  # e.g. rescan local models

The browser is a non-modal dialog and the downloads panel a dock widget, both
created on first use and kept, so downloads go on while either is closed.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from app.catalog import pairing
from app.catalog.browser import ModelBrowserDialog
from app.catalog.downloads_panel import DownloadsPanel
from app.catalog.service import CatalogService
from app.runtime_link import RuntimeLink
from runtime.protocol import DownloadInfo


class CatalogUi(QObject):
    sig_model_downloaded = Signal(list)  # the snapshot paths of a finished download
    sig_paired = Signal(str, str)  # a model downloaded with its draft: the model's file, the draft's (stored as its draft model)

    def __init__(self, link: RuntimeLink, window: QWidget):
        super().__init__(window)
        self.window = window
        self.service = CatalogService(link, self)
        self.browser: ModelBrowserDialog | None = None
        self.dock: QDockWidget | None = None
        self._announced: set[str] = set()
        self.service.sig_download.connect(self._on_download)
        self.service.sig_pair_downloaded.connect(self._on_pair_downloaded)

    def open_browser(self) -> ModelBrowserDialog:
        if self.browser is None:
            self.browser = ModelBrowserDialog(self.service, self.window)
            self.browser.sig_download_requested.connect(lambda *_: self.show_downloads())
        self.browser.show()
        self.browser.raise_()
        return self.browser

    def show_downloads(self) -> QDockWidget:
        if self.dock is None:
            self.dock = QDockWidget(self.tr("Downloads"), self.window)
            self.dock.setObjectName("downloads-dock")
            self.dock.setWidget(DownloadsPanel(self.service, self.dock))
            if isinstance(self.window, QMainWindow):
                self.window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        self.dock.show()
        return self.dock

    def _on_download(self, info: DownloadInfo) -> None:
        if info.state == "done" and info.id not in self._announced:
            self._announced.add(info.id)
            self.sig_model_downloaded.emit(list(info.paths))

    def _on_pair_downloaded(self, target_paths: list[str], draft_paths: list[str]) -> None:
        try:
            target, draft = pairing.pair(target_paths, draft_paths)
        except (ValueError, OSError) as exc:  # a settings file that cannot be read names itself and the field
            self.service.sig_error.emit(self.tr("Pairing the model with its draft"), str(exc))
            return
        if self.browser is not None:
            self.browser.show_note(self.tr("{model} will load with its draft model {draft}").format(
                model=os.path.basename(target), draft=os.path.basename(draft)))
        self.sig_paired.emit(target, draft)
