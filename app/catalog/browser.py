"""The model browser dialog: the curated catalog or a search, a repository's quantization levels
with size and fit badges, its draft partner, and a download button (and, for a repository with a
compatible draft partner, one that downloads the level with its draft model and pairs them, the fit
counting both). It only renders CatalogService's
signals and forwards clicks; the runtime does the work."""

from __future__ import annotations

import typing

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.catalog.table_model import PayloadRole, QuantModel, RepoModel, kind_text
from app.catalog.service import CatalogService
from app.ui.accessibility import described
from runtime.protocol import CatalogEntry, CatalogKind, DownloadInfo, DraftCheckResult, HubQuantsResult, HubRepo, KvType


class ModelBrowserDialog(QDialog):
    sig_download_requested = Signal(str, str)  # repo, quant (also when its draft model comes with it)

    def __init__(self, service: CatalogService, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Models from Hugging Face"))
        self.resize(1100, 600)
        self.service = service
        self._catalog: list[CatalogEntry] = []
        self._repo: str | None = None
        self._draft: str | None = None  # the shown repository's draft partner (a catalog entry's), once found compatible
        self._note = ""

        self.search_edit = QLineEdit(placeholderText=self.tr("Search Hugging Face for GGUF models (empty: the curated catalog)"))
        described(self.search_edit, self.tr("Search"), self.tr("Words to search Hugging Face for; empty shows the curated catalog"))
        self.search_button = QPushButton(self.tr("Search"))
        self.search_button.setAccessibleDescription(self.tr("Search Hugging Face for these words"))
        self.kind_filter = QComboBox()
        self.kind_filter.addItem(self.tr("All kinds"), None)
        for kind in typing.get_args(CatalogKind):
            self.kind_filter.addItem(kind_text(kind), kind)
        described(self.kind_filter, self.tr("Kind"), self.tr("Show only the catalog's models of this kind: reasoning, chat, coder, vision or embedding"))
        self.repos = RepoModel(self)
        self.repo_view = _table(self.repos, stretch=0)  # the long names elide, so kind, size and partner stay whole
        self.levels = QuantModel(self)
        self.level_view = level_table(self.levels)
        self.n_ctx = QSpinBox(minimum=512, maximum=1_048_576, singleStep=1024, value=4096)
        self.kv_type = QComboBox()
        for kind in typing.get_args(KvType):
            self.kv_type.addItem(kind, kind)
        self.repo_label = QLabel(self.tr("Pick a model on the left."))
        self.repo_label.setWordWrap(True)
        self.draft_label = QLabel("")
        self.draft_label.setWordWrap(True)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.download_button = QPushButton(self.tr("Download"))
        self.download_button.setAccessibleDescription(self.tr("Download the chosen quantization level into the Hugging Face cache"))
        self.download_with_draft_button = QPushButton(self.tr("Download with its draft model"))
        self.download_with_draft_button.setAccessibleDescription(self.tr("Download the chosen level and its draft partner, and load them together"))
        self.download_with_draft_button.setVisible(False)
        described(self.repo_view, self.tr("Models"), self.tr("Models to choose from; the arrow keys move, the levels of the chosen one show on the right"))
        described(self.level_view, self.tr("Quantization levels"), self.tr("Each level's size and whether it fits this machine"))
        described(self.n_ctx, self.tr("Context"), self.tr("The context size the fit check assumes"))
        described(self.kv_type, self.tr("KV cache"), self.tr("The KV cache type the fit check assumes"))
        self.download_button.setEnabled(False)

        search_row = QHBoxLayout()
        search_row.addWidget(self.search_edit)
        search_row.addWidget(self.search_button)
        search_row.addWidget(self.kind_filter)
        fit_row = QHBoxLayout()
        fit_row.addWidget(QLabel(self.tr("Context")))
        fit_row.addWidget(self.n_ctx)
        fit_row.addWidget(QLabel(self.tr("KV cache")))
        fit_row.addWidget(self.kv_type)
        fit_row.addStretch(1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.repo_label)
        right_layout.addLayout(fit_row)
        right_layout.addWidget(self.level_view)
        right_layout.addWidget(self.draft_label)
        download_row = QHBoxLayout()
        download_row.addStretch(1)
        download_row.addWidget(self.download_with_draft_button)
        download_row.addWidget(self.download_button)
        right_layout.addLayout(download_row)
        splitter = QSplitter()
        splitter.addWidget(self.repo_view)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)  # the list has the longer lines: a model's name, repository and kind
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(search_row)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)

        self.search_button.clicked.connect(self._on_search)
        self.search_edit.returnPressed.connect(self._on_search)
        self.kind_filter.currentIndexChanged.connect(self._on_kind_filter)
        self.repo_view.selectionModel().currentRowChanged.connect(self._on_repo_selected)
        self.level_view.selectionModel().currentRowChanged.connect(self._on_level_selected)
        self.n_ctx.editingFinished.connect(self._on_fit_settings_changed)
        self.kv_type.currentTextChanged.connect(self._on_fit_settings_changed)
        self.download_button.clicked.connect(self._on_download)
        self.download_with_draft_button.clicked.connect(self._on_download_with_draft)
        service.sig_catalog.connect(self._on_catalog)
        service.sig_search_results.connect(self._on_search_results)
        service.sig_quants.connect(self._on_quants)
        service.sig_error.connect(self._on_error)
        service.sig_download.connect(self._on_download_update)
        service.sig_draft_check.connect(self._on_draft_check)
        service.load_catalog()

    # ---- slots ---------------------------------------------------------------------
    def _on_catalog(self, entries: list[CatalogEntry]) -> None:
        self._catalog = entries
        if not self.search_edit.text().strip():
            self._show_catalog()

    def _show_catalog(self) -> None:
        kind = self.kind_filter.currentData()
        self.repos.set_rows([e for e in self._catalog if kind is None or e.kind == kind])

    def _on_kind_filter(self, _index: int) -> None:
        if not self.search_edit.text().strip():  # the filter is the catalog's: search results have no kind
            self._show_catalog()

    def _on_search(self) -> None:
        query = self.search_edit.text().strip()
        if not query:
            self._show_catalog()
            return
        self.status.setText(self.tr("Searching for “{query}”…").format(query=query))
        self.service.search(query)

    def _on_search_results(self, query: str, repos: list[HubRepo]) -> None:
        if query != self.search_edit.text().strip():
            return  # the user typed on
        self.repos.set_rows(repos)
        self.status.setText(self.tr("%n model(s) found for “{query}”", "", len(repos)).format(query=query) if repos else self.tr("no GGUF models found for “{query}”").format(query=query))

    def _on_repo_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        item = self.repos.row(current.row())
        if isinstance(item, CatalogEntry):
            self.show_repo(item.repo, item.draft)
        else:
            self.show_repo(item.id)

    def show_repo(self, repo: str, draft: str | None = None) -> None:
        """Show one repository's levels (also for a window that opens the browser on a given model)."""
        self._repo = repo
        self._draft = draft  # offered for download once its check says it is compatible
        self._note = ""  # what became of this repository's download ("… will load with its draft model …")
        self.download_with_draft_button.setVisible(False)
        self.draft_label.setText(self.tr("Draft partner for faster replies: {draft} (checking its tokenizer…)").format(draft=draft) if draft else "")
        self.repo_label.setText(repo)
        if draft:
            self.service.draft_check(repo, draft)
        self.levels.set_rows([])
        self._set_download_enabled(False)
        self._request_quants()

    def show_note(self, text: str) -> None:
        """Say what became of the shown repository's download, in the status line, until another repository is shown."""
        self._note = text
        self.status.setText(text)

    def _on_fit_settings_changed(self, *_args: object) -> None:
        if self._repo:
            self._request_quants()

    def _request_quants(self) -> None:
        if self._repo is None:
            return
        self.status.setText(self.tr("Reading {repo}: files, and one GGUF header for the fit check…").format(repo=self._repo))
        self.service.quants(self._repo, self.n_ctx.value(), typing.cast(KvType, self.kv_type.currentText()), draft_repo=self._draft)

    def _on_quants(self, result: HubQuantsResult) -> None:
        if result.repo != self._repo:
            return
        self.levels.set_rows(result.levels)
        h = result.header
        if h is not None:
            self.repo_label.setText(self.tr("{repo}: {architecture}, {layers} layers, trained context {context}").format(
                repo=result.repo, architecture=h.architecture, layers=h.n_layers, context=h.context_length))
        levels = self.tr("%n quantization level(s)", "", len(result.levels)) if result.levels else self.tr("no GGUF files in this repository")
        # The levels are read again when a download ends (its "downloaded" mark): what that download became stays said.
        self.status.setText(f"{levels} · {self._note}" if self._note else levels)
        preferred = next((i for i, lv in enumerate(result.levels) if lv.name == "Q4_K_M"), 0 if result.levels else None)
        if preferred is not None:
            self.level_view.selectRow(preferred)

    def _on_level_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        level = self.levels.data(self.levels.index(current.row(), 0), PayloadRole) if current.isValid() else None
        self._set_download_enabled(level is not None and not level.problem and not level.downloaded)

    def _set_download_enabled(self, enabled: bool) -> None:
        self.download_button.setEnabled(enabled)
        self.download_with_draft_button.setEnabled(enabled)

    def _on_download(self) -> None:
        index = self.level_view.currentIndex()
        if not index.isValid() or self._repo is None:
            return
        level = self.levels.row(index.row())
        self.service.start_download(self._repo, level.name)
        self.sig_download_requested.emit(self._repo, level.name)
        self._set_download_enabled(False)

    def _on_download_with_draft(self) -> None:
        index = self.level_view.currentIndex()
        if not index.isValid() or self._repo is None or self._draft is None:
            return
        level = self.levels.row(index.row())
        self.service.start_download_with_draft(self._repo, level.name, self._draft)
        self.sig_download_requested.emit(self._repo, level.name)
        self._set_download_enabled(False)

    def _on_download_update(self, info: DownloadInfo) -> None:
        if info.repo == self._repo and info.state == "done":
            self._request_quants()  # its "downloaded" mark

    def _on_draft_check(self, target: str, draft: str, result: DraftCheckResult) -> None:
        if target != self._repo:
            return
        if result.compatible:
            self.draft_label.setText(self.tr("Draft partner for faster replies: {draft} (same tokenizer: compatible)").format(draft=draft))
            self.download_with_draft_button.setVisible(draft == self._draft)
        else:
            self.draft_label.setText(self.tr("Draft partner {draft} does not match: {reasons}").format(draft=draft, reasons="; ".join(result.reasons)))
            if draft == self._draft:  # never loaded with it: the fit is the model's alone
                self._draft = None
                self._request_quants()

    def _on_error(self, what: str, message: str) -> None:
        self.status.setText(f"{what}: {message}")


def level_table(levels: QuantModel) -> QTableView:
    """Size (a projector makes it the longest text) gives up room first: a stretched last section keeps 100 px
    even where that brings a horizontal scroll bar."""
    return _table(levels, stretch=1)


def _table(model: QAbstractItemModel, stretch: int | None = None) -> QTableView:
    """Rows of one line each (a cell too narrow elides, never wraps into a clipped second line); the `stretch`
    column takes the room the others leave, else the last one does."""
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(False)
    view.verticalHeader().hide()
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    if stretch is None:
        header.setStretchLastSection(True)
    else:
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    return view
