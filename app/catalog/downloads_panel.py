"""The downloads panel: a progress bar per download, speed, ETA, and pause, resume and cancel; with none, where one comes from."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.catalog.table_model import DownloadsModel, Index, ProgressRole
from app.catalog.service import CatalogService

PROGRESS_COLUMN = 2


class ProgressDelegate(QStyledItemDelegate):
    def paint(self, painter, option, index: Index) -> None:
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 2, -2, -2)
        bar.minimum, bar.maximum = 0, 100
        bar.progress = int(index.data(ProgressRole) or 0)
        bar.text = str(index.data())
        bar.textVisible = True
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)


class DownloadsPanel(QWidget):
    def __init__(self, service: CatalogService, parent: QWidget | None = None):
        super().__init__(parent)
        self.service = service
        self.model = DownloadsModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setItemDelegateForColumn(PROGRESS_COLUMN, ProgressDelegate(self.view))
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(PROGRESS_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.pause_button = QPushButton(self.tr("Pause"))
        self.resume_button = QPushButton(self.tr("Resume"))
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.pause_button.setAccessibleDescription(self.tr("Pause the chosen download; it resumes where it stopped"))
        self.resume_button.setAccessibleDescription(self.tr("Resume the chosen download"))
        self.cancel_button.setAccessibleDescription(self.tr("Cancel the chosen download and delete what it fetched"))
        self.view.setAccessibleName(self.tr("Downloads"))
        self.view.setAccessibleDescription(self.tr("One row per download: model, file, progress, speed, time left and state"))
        self.empty = QLabel(self.tr("No downloads. Model ▸ Browse Hugging Face models… fetches a model; a download paused or cut off "
                                    "by a restart shows here, to resume."))
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # quieter than a row's text, yet not "disabled" to a screen reader
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for b in (self.pause_button, self.resume_button, self.cancel_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty, 1)
        layout.addLayout(buttons)
        for changed in (self.model.rowsInserted, self.model.rowsRemoved, self.model.modelReset):
            changed.connect(self._show_empty)
        self._show_empty()

        self.pause_button.clicked.connect(self._on_pause)
        self.resume_button.clicked.connect(self._on_resume)
        self.cancel_button.clicked.connect(self._on_cancel)
        self.view.selectionModel().currentRowChanged.connect(lambda *_: self._update_buttons())
        self.model.dataChanged.connect(lambda *_: self._update_buttons())
        service.sig_download.connect(self.model.upsert)
        self._update_buttons()
        service.refresh_downloads()  # downloads a restart left paused

    def _show_empty(self) -> None:
        empty = self.model.rowCount() == 0
        self.view.setHidden(empty)
        self.empty.setHidden(not empty)

    def _selected(self):
        index = self.view.currentIndex()
        return self.model.row(index.row()) if index.isValid() and index.row() < self.model.rowCount() else None

    def _update_buttons(self) -> None:
        d = self._selected()
        state = d.state if d else None
        self.pause_button.setEnabled(state in ("queued", "waiting", "running"))
        self.resume_button.setEnabled(state in ("paused", "failed"))
        self.cancel_button.setEnabled(state in ("queued", "waiting", "running", "paused", "failed"))

    def _on_pause(self) -> None:
        if d := self._selected():
            self.service.pause(d.id)

    def _on_resume(self) -> None:
        if d := self._selected():
            self.service.resume(d.id)

    def _on_cancel(self) -> None:
        if d := self._selected():
            self.service.cancel(d.id)
