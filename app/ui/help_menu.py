"""Help: the keyboard shortcuts (read from the window's menus), the log folder, and About Lokal (the
versions of Lokal, its protocol, Qt, Python and the runtime's llama.cpp, and the devices it found)."""

from __future__ import annotations

import sys
from typing import Callable

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QObject, Qt, QUrl, qVersion
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from app.ui.shortcuts import ShortcutsDialog
from runtime import __version__ as lokal_version
from runtime import protocol
from runtime.paths import log_dir
from runtime.protocol import InitializeResult


class HelpMenu(QObject):
    def __init__(self, menu: QMenu, menus: Callable[[], list[QMenu]], runtime_info: Callable[[], InitializeResult | None], window: QWidget):
        super().__init__(window)
        self._menus = menus  # the window's menus, whose shortcuts the list shows
        self._runtime_info = runtime_info  # what the runtime said of itself when it started (None: not running)
        self.window = window  # the dialogs' parent
        self.action_shortcuts = menu.addAction(self.tr("&Keyboard shortcuts"), self.open_shortcuts)
        self.action_shortcuts.setShortcut(QKeySequence("F1"))
        self.action_open_logs = menu.addAction(self.tr("Open &log folder"), self.open_log_folder)
        menu.addSeparator()
        about = menu.addAction(self.tr("&About Lokal"), self.show_about)
        about.setMenuRole(QAction.MenuRole.AboutRole)

    def open_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(self._menus(), self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def open_log_folder(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_dir())))

    def show_about(self) -> None:
        info = self._runtime_info()
        if info:
            devices = [
                self.tr("Device: {name} ({kind}, {gib} GiB)").format(name=d.name, kind=d.type, gib=f"{d.memory_total / 2**30:.1f}")
                for d in info.devices
            ]
            runtime_lines = "<br>".join([
                f"llama.cpp (llama-cpp-python) {info.llama_cpp_version}",
                self.tr("Backend: {backend}").format(backend=info.backend.upper()),
                *devices,
            ])
        else:
            runtime_lines = self.tr("The runtime is not running.")
        QMessageBox.about(
            self.window,
            self.tr("About Lokal"),
            f"<h3>Lokal {lokal_version}</h3><p>" + self.tr("Chat with language models that run on this machine.") + "</p>"
            + "<p>" + self.tr("Protocol {version}").format(version=protocol.PROTOCOL_VERSION)
            + f"<br>Qt {qVersion()}, PySide6 {pyside_version}<br>Python {sys.version.split()[0]}<br>{runtime_lines}</p>"
            + "<p>" + self.tr("Logs: {folder}").format(folder=log_dir()) + "</p>",
        )
