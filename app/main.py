"""The window's entry points.

    main(argv) -> int
        The GUI: a QApplication, the palette, the main window; used by `lokal` (app/cli).

    create_main_window(store_path=None, runtime_command=None, autoload=True, store=None) -> MainWindow
        The main window over a new runtime process, not yet shown. Needs a QApplication.
        `store_path`: the SQLite file (default: conversations.sqlite3 in runtime.paths.data_dir(),
        which honours LOKAL_DATA_DIR); or `store`, already open (main() opens it with the user in
        the loop: app/storage/startup.py). Raises StoreUnavailable / SchemaTooNew otherwise. `runtime_command`: how to start the runtime (default:
        runtime.client.runtime_command(), i.e. the frozen app runs itself with `runtime`).
        `autoload`: load the last chosen model, else the starter model (fetched in the background
        if missing). Call window.shutdown() (or close it) to stop the runtime. The window's strings
        are in the language saved in View ▸ Language, else the OS's (app/ui/language).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Sequence

log = logging.getLogger("lokal.main")


def create_main_window(store_path=None, runtime_command: Sequence[str] | None = None, autoload: bool = True, store=None, notice: str | None = None):
    from app.runtime_link import RuntimeLink
    from app.storage.store import open_or_set_aside
    from app.ui import language
    from app.window import MainWindow

    problem = notice
    if store is None:
        store, problem = open_or_set_aside(store_path)
    language.install(language.wanted(store.get_state(language.STATE_KEY, language.SYSTEM)))
    link = RuntimeLink(runtime_command)
    window = MainWindow(store, link, autoload=autoload)
    # The link lives exactly as long as the window (Qt deletes it with the window), never until some
    # later garbage collection that could run while another event loop is processing its process's events.
    link.setParent(window)
    if problem:
        window.show_banner(problem)
    # Features plug into the window's extension points: its menus by id, and the Model menu's sections.
    from app.api.feature import install as install_api  # Model ▸ Serve the API… (app/api)
    from app.kvcache.feature import install as install_kv_cache  # Edit ▸ Saved conversation caches… (app/kvcache)
    from app.branches.feature import install as install_branches  # Chat ▸ Previous/Next/Delete branch (app/branches)
    from app.importing.feature import install as install_importing  # File ▸ Import conversations… (app/importing)
    from app.remote.feature import install as install_remote  # remote endpoints in the Model menu (app/remote)
    from app.presets.feature import install as install_presets  # Ctrl+Shift+N: a new chat from a preset (app/presets)
    from app.search.feature import install as install_search  # Ctrl+K and Ctrl+F: search through every message (app/search)
    from app.attachments.feature import install as install_attachments  # files and pictures on messages, Chat ▸ Documents… (app/attachments)

    context = window.feature_context()  # what they may use of the window (app/features.py)
    install_remote(context)
    install_api(context)
    install_kv_cache(context)
    install_search(context)
    install_presets(context)
    install_attachments(context)
    install_branches(context)
    install_importing(context)
    return window


def main(argv: list[str]) -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.single_instance import SingleInstance, ask_first_instance_to_raise
    from app.storage.startup import Startup, open_store_or_ask
    from app.ui import language, theme
    from app.ui.stall_probe import StallProbe
    from runtime.log_files import start_logging
    from runtime.paths import data_dir
    from runtime.private_files import tighten_own_folders

    # The window keeps the user's umask (programs it opens inherit it) and creates its own files 0600.
    start_logging("window", stderr_prefix="lokal")
    tighten_own_folders()  # before the store opens: an older Lokal's 0644 database becomes private first
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(sys.argv[:1] + list(argv))
    assert isinstance(app, QApplication)  # ours, or pytest-qt's in the tests: never a bare QCoreApplication
    app.setApplicationName("Lokal")
    app.setOrganizationName("Lokal")
    app.setDesktopFileName("lokal")
    theme.apply(app)
    language.install(language.wanted(None))  # the OS's language until the saved choice is read with the store

    # Before anything opens the database: a second window would share it (app/single_instance.py).
    guard = SingleInstance(data_dir())
    try:
        first = guard.acquire()
    except OSError as exc:
        log.error("%s", exc)
        QMessageBox.critical(None, Startup.tr("Lokal cannot start"), Startup.tr("Lokal cannot use its data folder: {reason}").format(reason=exc))
        return 1
    if not first:
        if ask_first_instance_to_raise(data_dir()):
            log.info("Lokal is already running: its window was brought to the front")
            return 0
        log.error("Lokal is already running (lock in %s) but does not answer", data_dir())
        QMessageBox.warning(
            None,
            Startup.tr("Lokal is already running"),
            Startup.tr(
                "Another Lokal window is open but does not answer. If it hangs, close it (or end it in your task "
                "manager), then start Lokal again."
            ),
        )
        return 1

    opened = open_store_or_ask()
    if opened is None:
        guard.release()
        return 1
    store, notice = opened
    # The window ends the application when it closes for good; hidden to keep serving the API, it does not.
    app.setQuitOnLastWindowClosed(False)
    _quit_on_sigterm(app)
    while True:
        window = create_main_window(store=store, notice=notice)
        guard.sig_raise_requested.connect(window.bring_to_front)
        window.sig_closed.connect(app.quit)
        window.show()
        log.info("window shown")
        if os.environ.get("LOKAL_STALL_LOG"):
            probe = StallProbe(report_over_ms=50, parent=window)
            probe.start()
        code = app.exec()
        window.shutdown()  # also after SIGTERM, which quits without closing the window
        if not window.restart_requested:
            break
        # View ▸ Language ▸ Restart now: the same process opens the window again, in the new language.
        log.info("opening the window again (language changed)")
        guard.sig_raise_requested.disconnect(window.bring_to_front)
        window.deleteLater()
        notice = None
    guard.release()
    return code


def _quit_on_sigterm(app) -> None:
    """SIGTERM (a logout, `kill`) closes the window the normal way, so the geometry and state are saved."""
    import signal

    from PySide6.QtCore import QTimer

    signal.signal(signal.SIGTERM, lambda *_args: app.quit())
    # Python runs signal handlers only when it has control; an idle timer gives it that inside Qt's loop.
    timer = QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(250)
