"""The GGUF files on this machine as a Qt tree model, from the runtime's `models.list`.

The runtime reads the headers on its own background pool (runtime/models/local.py: the
Hugging Face cache, the files the user added, Lokal's models folder), the same list
`lokal models` prints; the answer arrives through the window's runtime link, so the
window never waits on the disk. A list asked for while the runtime starts or restarts
is asked again once it is ready. A file the user picks or drops is added through the
runtime too (`models.add` checks it is a whole GGUF model and remembers it).
"""

from __future__ import annotations

import dataclasses
import logging
import os

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel

from app.formatting import human_size
from app.runtime_link import ConnectionState, RuntimeLink
from app.runtime_link.error_words import said
from runtime.protocol import LocalModel, ModelLoadResult, ModelsAddParams, ModelsListResult, RpcError, methods

log = logging.getLogger("lokal.models")

FileRole = Qt.ItemDataRole.UserRole + 1  # the LocalModel of a quantization row
LIST_TIMEOUT_MS = 60_000  # a cold disk with many large headers


class LocalModels(QObject):
    """A tree model: one row per model, under it one row per quantization file."""

    sig_scanned = Signal()
    sig_added = Signal(object)  # LocalModel: a file the user added, checked and remembered by the runtime
    sig_add_failed = Signal(str, str)  # path, why

    def __init__(self, link: RuntimeLink, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self.model = QStandardItemModel(self)
        self.files: list[LocalModel] = []  # one per file identity
        self.copies: dict[str, list[str]] = {}  # a listed file's path -> every path of that same file, it first
        self.errors: dict[str, str] = {}  # path -> why it cannot be loaded
        self._by_real_path: dict[str, LocalModel] = {}  # every copy's resolved path -> its listed entry (file_for runs as a reply starts)
        self._asking = False
        self._waiting_for_runtime = False
        self._rescan = False
        self._stopped = False
        link.sig_ready.connect(self._on_runtime_ready)

    @property
    def scanning(self) -> bool:
        return self._asking or self._waiting_for_runtime

    @property
    def runtime_ready(self) -> bool:
        return self.link.state in (ConnectionState.READY, ConnectionState.BUSY)

    def scan(self) -> None:
        if self._stopped:
            return
        if self._asking:
            self._rescan = True  # something changed while this list was made: ask again when it comes
            return
        if not self.runtime_ready:
            self._waiting_for_runtime = True
            return
        self._rescan = False
        self._asking = True
        self.link.call(methods.MODELS_LIST, None, self._on_listed, self._on_failed, LIST_TIMEOUT_MS)

    def add_file(self, path: str) -> None:
        """A file the user picked or dropped: the runtime checks it is a whole GGUF model and remembers it; then the list is asked again."""
        if not self.runtime_ready:
            # Dropped while the runtime starts or restarts: add it as soon as the runtime is there.
            def when_ready(_info) -> None:
                self.link.sig_ready.disconnect(when_ready)
                self.add_file(path)

            self.link.sig_ready.connect(when_ready)
            return
        self.link.call(methods.MODELS_ADD, ModelsAddParams(path), self._on_added, lambda error: self.sig_add_failed.emit(path, said(error)))

    def _on_added(self, added: LocalModel) -> None:
        self.scan()
        self.sig_added.emit(added)

    def stop(self) -> None:
        """No more lists: the window is closing."""
        if self._stopped:
            return
        self._stopped = True
        self.link.sig_ready.disconnect(self._on_runtime_ready)

    def _on_runtime_ready(self, _info) -> None:
        if self._waiting_for_runtime:
            self._waiting_for_runtime = False
            self.scan()

    def _on_listed(self, result: ModelsListResult) -> None:
        self._asking = False
        if self._stopped:
            return
        models = result.models
        self._publish([m for m in models if not m.problem], {m.path: m.problem for m in models if m.problem})
        if self._rescan:
            self.scan()

    def _on_failed(self, error: RpcError) -> None:
        self._asking = False
        if self._stopped:
            return
        log.warning("models.list failed: %s", error.message)
        if not self.runtime_ready:
            self._waiting_for_runtime = True  # the runtime died meanwhile: ask the next one
        elif self._rescan:
            self.scan()

    def _publish(self, files: list[LocalModel], errors: dict[str, str]) -> None:
        files, self.copies = one_per_identity(files)
        self.files, self.errors = files, errors
        self._by_real_path = {os.path.realpath(p): f for f in files for p in self.paths_of(f)}
        self.model.clear()
        groups: dict[str, QStandardItem] = {}
        for info in sorted(files, key=lambda f: (f.group.lower(), f.size)):
            group = groups.get(info.group)
            if group is None:
                group = groups[info.group] = QStandardItem(info.group)
                group.setEditable(False)
                self.model.appendRow(group)
            item = QStandardItem(f"{info.quantization}  ·  {human_size(info.size)}")
            item.setEditable(False)
            item.setData(info, FileRole)
            item.setToolTip(self.where(info))
            group.appendRow(item)
        self.sig_scanned.emit()

    def paths_of(self, info: LocalModel) -> list[str]:
        """Every place the file `info` lies (the same file in the Hugging Face cache and the models folder, say)."""
        return self.copies.get(info.path, [info.path])

    def where(self, info: LocalModel) -> str:
        """Where the file lies, for a tooltip: its path, and any other copy of the same file."""
        paths = self.paths_of(info)
        text = self.tr("Where it lives: {path}").format(path=paths[0])
        return "\n".join([text, *(self.tr("Also at: {path}").format(path=p) for p in paths[1:])])

    def file_for(self, path: str) -> LocalModel | None:
        """The listed entry of the file at `path`, or of an identical copy of it."""
        return self._by_real_path.get(os.path.realpath(path))

    def display_name(self, loaded: ModelLoadResult) -> str:
        """What the menu calls a loaded model: the name its quantizations share, else the name in its header."""
        local = self.file_for(loaded.path)
        return local.group if local is not None and local.group else loaded.name


def one_per_identity(files: list[LocalModel]) -> tuple[list[LocalModel], dict[str, list[str]]]:
    """One entry per file identity (size and hashes, runtime/models/identity.py), the first listed; and for each
    kept entry every path the same file has. A file without an identity (unreadable) is its own entry.

    The entry's name is the best spelled of its copies' (the most capitals): a header that writes its name in
    lower case is named after the path (runtime/models/local.py's group_name), so the same file reached as
    SmolLM2-135M-Instruct.Q4_1.gguf and as "smol copy.gguf" is "SmolLM2 135M Instruct", whichever is listed first."""
    kept: dict[str, LocalModel] = {}
    named: dict[str, str] = {}
    copies: dict[str, list[str]] = {}
    for info in files:
        key = info.identity or "path:" + os.path.realpath(info.path)
        first = kept.setdefault(key, info)
        copies.setdefault(first.path, []).append(info.path)
        if _capitals(info.group) > _capitals(named.get(key, "")):
            named[key] = info.group
    return [dataclasses.replace(info, group=named.get(key, info.group)) for key, info in kept.items()], copies


def _capitals(name: str) -> int:
    return sum(c.isupper() for c in name)
