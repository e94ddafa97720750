"""Opening the real window over the real runtime process and the starter model, and waiting on it."""

from __future__ import annotations

from app.chat.controller import ConversationSettings
from waiting import qt_wait_until

LOAD_MS = 90_000
REPLY_MS = 240_000
N_CTX = 2048


def open_shared_window(store_path, starter_model, settings: ConversationSettings | None = None):
    """A window for a whole test module (one runtime, one model load): the caller shuts it down."""
    from app.main import create_main_window

    window = create_main_window(store_path=store_path, autoload=False)
    window.chat.default_settings = settings or ConversationSettings(temperature=0.0, max_tokens=8, n_ctx=N_CTX, seed=1)
    window.show()
    window.load_model(str(starter_model))
    try:
        qt_wait_until(lambda: window.session.loaded is not None and not window.session.busy and not window.link.jobs, LOAD_MS / 1000, "the starter model loading in the shared window")
    except AssertionError:
        window.shutdown()
        raise
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


