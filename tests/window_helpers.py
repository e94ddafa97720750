"""Opening the real window over the real runtime process and the starter model, and waiting on it."""

from __future__ import annotations

from app.chat.controller import ConversationSettings

LOAD_MS = 90_000
REPLY_MS = 240_000
N_CTX = 2048


def wait_for(condition, timeout_ms: int) -> bool:
    """Run Qt's event loop until `condition()` holds or `timeout_ms` passed (for fixtures that have no qtbot)."""
    import time

    from PySide6.QtCore import QEventLoop, QTimer

    deadline = time.monotonic() + timeout_ms / 1000
    loop = QEventLoop()
    timer = QTimer()
    timer.timeout.connect(lambda: (condition() or time.monotonic() > deadline) and loop.quit())
    timer.start(10)
    if not condition():
        loop.exec()
    timer.stop()
    return condition()


def open_shared_window(store_path, starter_model, settings: ConversationSettings | None = None):
    """A window for a whole test module (one runtime, one model load): the caller shuts it down."""
    from app.main import create_main_window

    window = create_main_window(store_path=store_path, autoload=False)
    window.chat.default_settings = settings or ConversationSettings(temperature=0.0, max_tokens=8, n_ctx=N_CTX, seed=1)
    window.show()
    window.load_model(str(starter_model))
    if not wait_for(lambda: window.session.loaded is not None and not window.session.busy and not window.link.jobs, LOAD_MS):
        window.shutdown()
        raise AssertionError("the starter model did not load in the shared window")
    return window


def close_shared_window(window) -> None:
    window.shutdown()
    window.close()
    window.deleteLater()


def wait_loaded(qtbot, window, timeout=LOAD_MS):
    qtbot.waitUntil(lambda: window.session.loaded is not None and not window.session.busy and not window.link.jobs, timeout=timeout)


def wait_reply(qtbot, window, timeout=REPLY_MS):
    qtbot.waitUntil(lambda: not window.chat.any_generating, timeout=timeout)


def open_window(qtbot, store_path, starter_model, settings: ConversationSettings | None = None, load=True):
    from app.main import create_main_window

    window = create_main_window(store_path=store_path, autoload=False)
    window.chat.default_settings = settings or ConversationSettings(temperature=0.0, max_tokens=8, n_ctx=N_CTX, seed=1)
    qtbot.addWidget(window)
    window.show()
    if load:
        window.load_model(str(starter_model))
        wait_loaded(qtbot, window)
    return window


