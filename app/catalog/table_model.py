"""Qt models for the browser and the downloads panel: repositories, quantization levels, downloads."""

from __future__ import annotations

from typing import Any, cast

from PySide6.QtCore import QT_TRANSLATE_NOOP, QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from app.formatting import human_size
from app.runtime_link.error_words import error_text
from app.ui.language import Context

from runtime.protocol import CatalogEntry, DownloadInfo, HubRepo, MemoryFit, QuantLevel

Index = QModelIndex | QPersistentModelIndex
Catalog = Context("Catalog")
FIT_COLOR = {"gpu": QColor("#1b7f3b"), "ram": QColor("#2a62b8"), "too_big": QColor("#b3261e")}
# Vision and embedding models are not plain chat models: their kind stands out (a vision model brings its
# projector; an embedding model is for documents and does not chat).
KIND_COLOR = {"vision": QColor("#7b3fa0"), "embedding": QColor("#8a5a00"), "reasoning": QColor("#2a62b8")}
ProgressRole = Qt.ItemDataRole.UserRole + 1  # 0..100 for the progress column
PayloadRole = Qt.ItemDataRole.UserRole + 2  # the row's dataclass



def fit_text(label: str) -> str:
    return {"gpu": Catalog.tr("fits on GPU"), "ram": Catalog.tr("fits in RAM"), "too_big": Catalog.tr("too big")}.get(label, "?")


def fit_detail(level: QuantLevel) -> str:
    """The fit badge's tooltip: what the level needs, of what, against what this machine has free, and what is counted in."""
    fit = level.fit
    if fit is None:
        return ""
    lines = [fit_figures(fit)]
    if level.mmproj:
        lines.append(Catalog.tr("The vision projector {file} ({size}) is counted in").format(file=level.mmproj, size=human_size(level.mmproj_size)))
    if fit.draft:
        lines.append(Catalog.tr("The draft model {name} is counted in").format(name=fit.draft))
    elif fit.draft_unknown:
        lines.append(Catalog.tr("The draft model is not counted in, its size is unknown: {reason}").format(reason=fit.draft_unknown))
    return "\n".join(lines)


def fit_figures(fit: MemoryFit) -> str:
    ram_rest = max(fit.ram_needed - fit.weights - fit.kv_cache, 0)  # in RAM the calibrated peak counts, not the whole compute buffer
    parts = Catalog.tr("weights {weights} + KV cache {kv} + compute {compute}").format(
        weights=human_size(fit.weights), kv=human_size(fit.kv_cache), compute=human_size(fit.compute if fit.label == "gpu" else ram_rest))
    if fit.label == "gpu":
        return Catalog.tr("Fits on the GPU: {needed} ({parts}) of {free} free").format(
            needed=human_size(fit.gpu_needed), parts=parts, free=human_size(fit.gpu_free))
    if fit.label == "ram":
        said = Catalog.tr("Fits in RAM: {needed} ({parts}) of {available} available").format(
            needed=human_size(fit.ram_needed), parts=parts, available=human_size(fit.ram_available))
    else:
        said = Catalog.tr("Too big: it needs {needed} ({parts}), and this machine has {available} of RAM available").format(
            needed=human_size(fit.ram_needed), parts=parts, available=human_size(fit.ram_available))
    if fit.has_gpu:
        said += "\n" + Catalog.tr("The GPU has {free} free; all layers need {needed} there").format(
            free=human_size(fit.gpu_free), needed=human_size(fit.gpu_needed))
    return said


def kind_text(kind: str) -> str:
    return {
        "chat": Catalog.tr("chat"), "reasoning": Catalog.tr("reasoning"), "coder": Catalog.tr("coder"),
        "vision": Catalog.tr("vision"), "embedding": Catalog.tr("embedding"),
    }.get(kind, kind)


def entry_tooltip(entry: CatalogEntry) -> str:
    """A catalog entry's description, and what its kind means for the download and the use."""
    lines = [entry.description]
    if entry.kind == "vision":
        lines.append(Catalog.tr("Sees pictures: its projector {mmproj} is downloaded with any level.").format(mmproj=entry.mmproj))
    elif entry.kind == "embedding":
        lines.append(Catalog.tr("For documents: it turns text into vectors for search, and does not chat."))
    if entry.thinking:
        lines.append(Catalog.tr("Thinks before it answers."))
    return "\n".join(line for line in lines if line)


def download_state(state: str) -> str:
    return {
        "queued": Catalog.tr("queued"), "running": Catalog.tr("downloading"), "paused": Catalog.tr("paused"),
        "failed": Catalog.tr("failed"), "done": Catalog.tr("done"), "cancelled": Catalog.tr("cancelled"),
        "waiting": Catalog.tr("waiting for another download of this file"),
    }.get(state, state)


def human_eta(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = int(seconds)
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m {seconds % 60:02d}s"


def _texts(*texts: object) -> tuple[str, ...]:
    """Column titles marked for translation: QT_TRANSLATE_NOOP returns its text, which PySide6's stubs type `object`."""
    return cast(tuple[str, ...], texts)


class _Table(QAbstractTableModel):
    headers: tuple[object, ...] = ()  # QT_TRANSLATE_NOOP's, translated when shown

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return Catalog.tr(str(self.headers[section])) if self.headers[section] else ""
        return None

    def set_rows(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def row(self, index: int) -> Any:
        return self.rows[index]


class RepoModel(_Table):
    """Catalog entries or search results: one repository per row. A draft partner shows by its catalog name where
    the catalog has it ("Qwen3 0.6B", not "Qwen/Qwen3-0.6B-GGUF"): a short cell, its repository in the tooltip."""

    headers = _texts(
        QT_TRANSLATE_NOOP("Catalog", "Repository"), QT_TRANSLATE_NOOP("Catalog", "Kind"), QT_TRANSLATE_NOOP("Catalog", "Size"),
        QT_TRANSLATE_NOOP("Catalog", "Draft partner / downloads"),
    )
    PARTNER_COLUMN = 3

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.names: dict[str, str] = {}  # a catalog entry's repository -> its name, for the partner column

    def set_rows(self, rows: list[Any]) -> None:
        self.names.update((r.repo, r.name) for r in rows if isinstance(r, CatalogEntry))
        super().set_rows(rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item = self.rows[index.row()]
        col = index.column()
        if role == PayloadRole:
            return item
        if role == Qt.ItemDataRole.ToolTipRole and isinstance(item, CatalogEntry):
            if col == self.PARTNER_COLUMN and item.draft:
                return Catalog.tr("Draft model for faster replies: {repo}").format(repo=item.draft)
            return entry_tooltip(item)
        if role == Qt.ItemDataRole.ForegroundRole and col == 1 and isinstance(item, CatalogEntry):
            return KIND_COLOR.get(item.kind)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if isinstance(item, CatalogEntry):
            return (f"{item.name}  ({item.repo})", kind_text(item.kind), item.params, self.names.get(item.draft, item.draft) if item.draft else "")[col]
        assert isinstance(item, HubRepo)
        gated = "  " + Catalog.tr("[gated]") if item.gated else ""
        return (item.id + gated, "", "", Catalog.tr("%Ln download(s)", None, item.downloads))[col]


class QuantModel(_Table):
    """A repository's quantization levels with their size and fit badge."""

    headers = _texts(
        QT_TRANSLATE_NOOP("Catalog", "Level"), QT_TRANSLATE_NOOP("Catalog", "Size"), QT_TRANSLATE_NOOP("Catalog", "Fit"),
        QT_TRANSLATE_NOOP("Catalog", "Memory needed"), QT_TRANSLATE_NOOP("Catalog", "Status"),
    )

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        level: QuantLevel = self.rows[index.row()]
        col = index.column()
        if role == PayloadRole:
            return level
        if role == Qt.ItemDataRole.ToolTipRole:
            return level.problem or fit_detail(level) or level.mmproj
        if role == Qt.ItemDataRole.ForegroundRole and col == 2 and level.fit:
            return FIT_COLOR.get(level.fit.label)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if col == 0:
            return level.name + (" " + Catalog.tr("(%n part(s))", None, len(level.files)) if len(level.files) > 1 else "")
        if col == 1:
            if level.mmproj:  # downloaded with the level, so its size is said beside the level's
                return Catalog.tr("{size} + {projector} projector").format(size=human_size(level.size), projector=human_size(level.mmproj_size))
            return human_size(level.size)
        if col == 2:
            return fit_text(level.fit.label) if level.fit else ""
        if col == 3:
            if not level.fit:
                return ""
            return human_size(level.fit.gpu_needed if level.fit.label == "gpu" else level.fit.ram_needed)
        return Catalog.tr("downloaded") if level.downloaded else (level.problem or "")


class DownloadsModel(_Table):
    """One row per download, updated in place from progress notifications."""

    headers = _texts(
        QT_TRANSLATE_NOOP("Catalog", "Model"), QT_TRANSLATE_NOOP("Catalog", "File"), QT_TRANSLATE_NOOP("Catalog", "Progress"),
        QT_TRANSLATE_NOOP("Catalog", "Speed"), QT_TRANSLATE_NOOP("Catalog", "Time left"), QT_TRANSLATE_NOOP("Catalog", "State"),
    )

    def upsert(self, info: DownloadInfo) -> None:
        for i, existing in enumerate(self.rows):
            if existing.id == info.id:
                if info.state == "cancelled":
                    self.beginRemoveRows(QModelIndex(), i, i)
                    del self.rows[i]
                    self.endRemoveRows()
                    return
                self.rows[i] = info
                self.dataChanged.emit(self.index(i, 0), self.index(i, len(self.headers) - 1))
                return
        if info.state == "cancelled":
            return
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows))
        self.rows.append(info)
        self.endInsertRows()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        d: DownloadInfo = self.rows[index.row()]
        col = index.column()
        percent = int(100 * d.bytes_done / d.bytes_total) if d.bytes_total else 0
        if role == PayloadRole:
            return d
        if role == ProgressRole:
            return percent
        error = error_text(d.error_code, d.error, d.error_data) if d.error else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return error
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return (
            f"{d.repo}:{d.quant}",
            d.current_file or (d.files[0] if len(d.files) == 1 else Catalog.tr("%n file(s)", None, len(d.files))),
            f"{percent}%  {human_size(d.bytes_done)} / {human_size(d.bytes_total)}",
            f"{human_size(d.speed)}/s" if d.state == "running" else "",
            human_eta(d.eta_s) if d.state == "running" else "",
            download_state(d.state) if not error else f"{download_state(d.state)}: {error}",
        )[col]
