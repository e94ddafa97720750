"""Edit ▸ Saved conversation caches…: the KV-cache dialog plugged into the window's Edit menu (by its id)."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from app.kvcache.dialog import KvCache, KvCacheDialog
from app.kvcache.store import KvStore
from app.ui.menus import MenuId


class KvCacheFeature:
    """Edit ▸ Saved conversation caches… (Ctrl+Shift+K): one dialog, made on first use, over one KvStore."""

    def __init__(self, window):
        self.window = window
        self.store = KvStore(window.link, window)
        self.dialog: KvCacheDialog | None = None
        self.action = window.menu(MenuId.EDIT).addAction(KvCache.tr("Saved conversation &caches…"), self.open_dialog)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+K"))

    def open_dialog(self) -> KvCacheDialog:
        if self.dialog is None:
            self.dialog = KvCacheDialog(self.store, self.window)
        else:
            self.dialog.refresh()
        self.dialog.open()
        return self.dialog


def install(window) -> KvCacheFeature:
    return window.add_feature("kvcache", KvCacheFeature(window))
