"""Closing the window while it serves the API: it asks (saying when a client's reply is streaming), then
stops the API and quits, keeps serving in the background (tray icon, or minimized without a tray), or stays."""

from __future__ import annotations

import openai
import pytest
from PySide6.QtWidgets import QMessageBox

from app.api.background import CANCEL, KEEP, STOP
from app.api.server import READY
from app.chat.controller import ConversationSettings
from serve_process import MODEL_NAME
from window_helpers import open_window

pytestmark = pytest.mark.slow


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch, starter_model):
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))  # this test's API key file
    win = open_window(qtbot, tmp_path / "conversations.sqlite3", starter_model, ConversationSettings(temperature=0.0, max_tokens=8, n_ctx=1024, seed=1))
    yield win
    win.shutdown()


def serve(qtbot, window):
    feature = window.features["api"]
    feature.server.port = 0  # any free port
    with qtbot.waitSignal(feature.server.sig_state_changed, timeout=60_000, check_params_cb=lambda s: s == READY):
        feature.server.start()
    return feature


def close_and_get_question(qtbot, window) -> QMessageBox:
    closing = window.features["api"].closing
    with qtbot.waitSignal(closing.sig_asked, timeout=10_000) as asked:
        window.close()
    assert window.isVisible(), "the window stays until the question is answered"
    return asked.args[0]


def answer(qtbot, window, box: QMessageBox, text: str, expected: str) -> None:
    button = next(b for b in box.buttons() if b.text() == text)
    with qtbot.waitSignal(window.features["api"].closing.sig_answered, timeout=10_000, check_params_cb=lambda a: a == expected):
        button.click()


def test_closing_mid_reply_says_so_and_keeps_serving_in_the_background_with_a_tray_icon(qtbot, window):
    feature = serve(qtbot, window)
    feature.closing.tray_available = True  # offscreen has no system tray; the tray icon and its menu are real all the same
    client = openai.OpenAI(base_url=feature.server.url, api_key=feature.server.key, max_retries=0, timeout=120)
    stream = client.completions.create(model=MODEL_NAME, prompt="1, 2, 3, 4, 5,", max_tokens=900, stream=True, temperature=0.0)
    chunks = iter(stream)
    assert next(chunks).choices[0].text  # a client's reply is streaming now
    box = close_and_get_question(qtbot, window)
    assert box.text() == "The API is answering 1 request right now."
    assert "cuts those replies off" in box.informativeText()
    assert box.defaultButton().text() == "Keep serving in the background"
    answer(qtbot, window, box, "Keep serving in the background", KEEP)

    assert not window.isVisible() and not window.is_shut_down
    tray = feature.closing.tray
    assert tray is not None and tray.isVisible() and feature.server.url in tray.toolTip()
    # The client's reply went on streaming through all of it.
    assert next(chunks).choices[0].text is not None
    stream.close()
    # The tray brings the window back, and goes.
    feature.closing.tray_show_action.trigger()
    qtbot.waitUntil(window.isVisible, timeout=5_000)
    assert not tray.isVisible() and not feature.closing.in_background
    # From the tray's menu: stop the API and quit.
    feature.closing.keep_serving()
    with qtbot.waitSignal(window.sig_closed, timeout=30_000):
        feature.closing.tray_quit_action.trigger()
    assert window.is_shut_down and not feature.server.running


def test_without_a_tray_keeping_serving_minimizes_the_window(qtbot, window):
    feature = serve(qtbot, window)
    feature.closing.tray_available = False
    box = close_and_get_question(qtbot, window)
    assert box.text() == f"Lokal is serving the API at {feature.server.url}."
    answer(qtbot, window, box, "Keep serving in the background", KEEP)
    assert window.isMinimized() and window.isVisible() and feature.closing.tray is None
    assert feature.server.running
    openai.OpenAI(base_url=feature.server.url, api_key=feature.server.key, max_retries=0).models.list()  # still answering


def test_stop_the_api_and_quit_ends_both_and_cancel_keeps_the_window(qtbot, window):
    feature = serve(qtbot, window)
    answer(qtbot, window, close_and_get_question(qtbot, window), "Cancel", CANCEL)
    assert window.isVisible() and feature.server.running and not window.is_shut_down

    url = feature.server.url
    with qtbot.waitSignal(window.sig_closed, timeout=30_000):
        answer(qtbot, window, close_and_get_question(qtbot, window), "Stop the API and quit", STOP)
    assert window.is_shut_down and not window.isVisible()
    with pytest.raises(openai.APIConnectionError):
        openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=5).models.list()


def test_without_serving_the_window_closes_at_once(qtbot, window):
    with qtbot.waitSignal(window.sig_closed, timeout=30_000):
        window.close()
    assert window.features["api"].closing.question is None and window.is_shut_down
