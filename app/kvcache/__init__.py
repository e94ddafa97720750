"""The saved KV states in the window: how much the store holds, and clearing it (runtime/kvstore does the work)."""


def install(window) -> None:
    """Edit ▸ Saved conversation caches… (Ctrl+Shift+K)."""
    from PySide6.QtGui import QKeySequence

    from app.kvcache.dialog import KvCacheDialog

    edit_menu = next(action.menu() for action in window.menuBar().actions() if action.menu() is not None and action.text() == "&Edit")
    action = edit_menu.addAction("Saved conversation &caches…", lambda: KvCacheDialog(window.link, window).open())
    action.setShortcut(QKeySequence("Ctrl+Shift+K"))
    window.action_kv_caches = action
