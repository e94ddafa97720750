"""The window's entry points.

    main(argv) -> int
        The GUI: a QApplication, the palette, the main window; used by `lokal` (app/cli).

    create_main_window(store_path=None, runtime_command=None, autoload=True) -> MainWindow
        The main window over a new runtime process, not yet shown. Needs a QApplication.
        `store_path`: the SQLite file (default: conversations.sqlite3 in runtime.paths.data_dir(),
        which honours LOKAL_DATA_DIR). `runtime_command`: how to start the runtime (default:
        runtime.client.runtime_command(), i.e. the frozen app runs itself with `runtime`).
        `autoload`: load the last chosen model, else the starter model (fetched in the background
        if missing). Call window.shutdown() (or close it) to stop the runtime.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Sequence


def create_main_window(store_path=None, runtime_command: Sequence[str] | None = None, autoload: bool = True):
    from app.runtime_link import RuntimeLink
    from app.storage.store import open_or_set_aside
    from app.window import MainWindow

    store, problem = open_or_set_aside(store_path)
    link = RuntimeLink(runtime_command)
    window = MainWindow(store, link, autoload=autoload)
    # The link lives exactly as long as the window (Qt deletes it with the window), never until some
    # later garbage collection that could run while another event loop is processing its process's events.
    link.setParent(window)
    if problem:
        window.show_banner(problem)
    from app.remote.window_hook import install as install_remote  # remote endpoints and "Serve the API" (app/remote)

    install_remote(window)
    from app.kvcache import install as install_kv_cache  # Edit ▸ Saved conversation caches… (app/kvcache)

    install_kv_cache(window)
    return window


def main(argv: list[str]) -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from app.ui import theme
    from app.ui.stall_probe import StallProbe

    logging.basicConfig(level=os.environ.get("LOKAL_LOG_LEVEL", "WARNING"), format="lokal %(levelname)s %(name)s: %(message)s")
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(sys.argv[:1] + list(argv))
    app.setApplicationName("Lokal")
    app.setOrganizationName("Lokal")
    app.setDesktopFileName("lokal")
    theme.apply(app)
    window = create_main_window()
    app.aboutToQuit.connect(window.shutdown)
    _quit_on_sigterm(app)
    window.show()
    if os.environ.get("LOKAL_STALL_LOG"):
        probe = StallProbe(report_over_ms=50, parent=window)
        probe.start()
    return app.exec()


def _quit_on_sigterm(app) -> None:
    """SIGTERM (a logout, `kill`) closes the window the normal way, so the geometry and state are saved."""
    import signal

    from PySide6.QtCore import QTimer

    signal.signal(signal.SIGTERM, lambda *_args: app.quit())
    # Python runs signal handlers only when it has control; an idle timer gives it that inside Qt's loop.
    timer = QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(250)
