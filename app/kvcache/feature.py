"""Edit ▸ Saved conversation caches…: the KV-cache dialog plugged into the window's Edit menu (by its id)."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from app.features import FeatureContext
from app.kvcache.dialog import KvCache, KvCacheDialog
from app.kvcache.store import KvStore
from app.ui.menus import MenuId


class KvCacheFeature:
    """Edit ▸ Saved conversation caches… (Ctrl+Shift+K): one dialog, made on first use, over one KvStore."""

    def __init__(self, context: FeatureContext):
        self.context = context
        self.store = KvStore(context.link, context.window())
        self.dialog: KvCacheDialog | None = None
        self.action = context.menu(MenuId.EDIT).addAction(KvCache.tr("Saved conversation &caches…"), self.open_dialog)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+K"))

    def open_dialog(self) -> KvCacheDialog:
        if self.dialog is None:
            self.dialog = KvCacheDialog(self.store, self.context.window())
        else:
            self.dialog.refresh()
        self.dialog.open()
        return self.dialog


def install(context: FeatureContext) -> KvCacheFeature:
    return context.add_feature("kvcache", KvCacheFeature(context))
