"""The window's "Serve the API" toggle: the window's own runtime serves the API with the window's model, its KV caches kept apart."""

import os
import signal
import socket

import openai
import psutil
import pytest

from serve_process import MODEL_NAME
from app.chat.controller import ConversationSettings
from app.remote.client import RemoteClient
from app.remote.endpoint_model import Endpoint
from app.api.server import FAILED, READY, STARTING, STOPPED
from window_helpers import open_window

pytestmark = pytest.mark.slow

SETTINGS = ConversationSettings(temperature=0.0, max_tokens=8, n_ctx=1024, seed=1)
GREEDY = dict(temperature=0.0, top_p=0.95, seed=1)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch, starter_model):
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))  # this test's key file (the runtime inherits it)
    win = open_window(qtbot, tmp_path / "conversations.sqlite3", starter_model, SETTINGS)
    yield win
    win.shutdown()


def open_panel(window):
    window.model_menu.aboutToShow.emit()
    next(a for a in window.model_menu.actions() if a.text() == "Serve the API…").trigger()
    window.features["api"].server.port = 0  # any free port: 8080 may be taken on a test machine
    return window.features["api"].panel


def serve(qtbot, window):
    panel = open_panel(window)
    with qtbot.waitSignal(window.features["api"].server.sig_state_changed, timeout=60_000, check_params_cb=lambda s: s == READY):
        panel.toggle.click()
    return panel


def api_client(panel):
    return openai.OpenAI(base_url=panel.url.text(), api_key=panel.key.text(), max_retries=0, timeout=120)


def runtime_processes():
    """This test's runtime processes: `python -m runtime` children of the test process."""
    return [p for p in psutil.Process().children(recursive=True) if p.cmdline()[1:3] == ["-m", "runtime"]]


def listening_port_owner(port: int) -> int | None:
    return next((p.pid for p in runtime_processes() if any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in p.net_connections("tcp"))), None)


def test_the_toggle_serves_from_the_windows_own_runtime_with_caches_kept_apart(qtbot, window):
    panel = serve(qtbot, window)
    server = window.features["api"].server
    assert panel.toggle.isChecked() and panel.status.text() == "Serving"
    assert panel.url.text().startswith("http://127.0.0.1:") and panel.url.text().endswith("/v1")
    assert panel.key.text() == server.key and server.key.startswith("lokal-")
    # No second runtime, no second copy of the model: the window's runtime listens itself.
    assert [p.pid for p in runtime_processes()] == [window.link.pid]
    assert listening_port_owner(server.port) == window.link.pid

    # What the panel shows is enough for a client to chat.
    client = RemoteClient()
    with qtbot.waitSignal(client.sig_models, timeout=30_000) as signal:
        client.list_models(Endpoint("self", "this machine", panel.url.text()), panel.key.text())
    assert signal.args[1] == [MODEL_NAME]

    # A caller who sends a window conversation's history gets none of the window's cache for it.
    with qtbot.waitSignal(window.chat.sig_reply_finished, timeout=120_000) as signal:
        window.chat.send("Name a fruit.")
    first = signal.args[0]
    history = [{"role": "user", "content": "Name a fruit."}, {"role": "assistant", "content": first.content}, {"role": "user", "content": "Another one?"}]
    second = api_client(panel).chat.completions.create(model=MODEL_NAME, messages=history, max_tokens=8, **GREEDY)
    assert second.usage.prompt_tokens_details.cached_tokens == 0
    # The API's own next turn reuses its own cache, and the window's next turn its own.
    third = api_client(panel).chat.completions.create(model=MODEL_NAME, messages=history + [{"role": "assistant", "content": second.choices[0].message.content}, {"role": "user", "content": "And a third?"}], max_tokens=4, **GREEDY)
    assert third.usage.prompt_tokens_details.cached_tokens >= second.usage.prompt_tokens
    with qtbot.waitSignal(window.chat.sig_reply_finished, timeout=120_000) as signal:
        window.chat.send("Another one?")
    assert signal.args[0].record.stats.prompt_tokens_reused >= first.record.stats.prompt_tokens + first.record.stats.completion_tokens

    with qtbot.waitSignal(server.sig_state_changed, timeout=30_000, check_params_cb=lambda s: s == STOPPED):
        panel.toggle.click()
    assert not panel.toggle.isChecked() and panel.url.text() == "" and not server.running
    assert listening_port_owner(server.port) is None


def test_a_window_reply_streams_beside_the_api_reply(qtbot, window):
    panel = serve(qtbot, window)
    stream = api_client(panel).completions.create(model=MODEL_NAME, prompt="1, 2, 3, 4, 5,", max_tokens=900, stream=True, **GREEDY)
    chunks = iter(stream)
    assert next(chunks).choices[0].text
    # Not BUSY, not waiting: decoded in the same batches as the API's reply, which keeps streaming.
    with qtbot.waitSignal(window.chat.sig_reply_finished, timeout=120_000) as signal:
        window.chat.send("Hi")
    assert signal.args[0].state == "complete" and signal.args[0].content
    assert next(chunks).choices[0].text
    assert "API" not in window.statusBar().currentMessage()
    # The window's figures are its own reply's, never the API's.
    assert window.metrics_panel.stats.completion_tokens == signal.args[0].record.stats.completion_tokens
    stream.close()


def test_the_api_comes_back_on_the_same_port_after_the_runtime_restarts(qtbot, window):
    panel = serve(qtbot, window)
    server = window.features["api"].server
    port = server.port
    with qtbot.waitSignal(server.sig_state_changed, timeout=30_000, check_params_cb=lambda s: s == STARTING):
        os.kill(window.link.pid, signal.SIGKILL)
    with qtbot.waitSignal(server.sig_state_changed, timeout=90_000, check_params_cb=lambda s: s == READY):
        pass
    assert server.port == port and panel.url.text() == f"http://127.0.0.1:{port}/v1"
    qtbot.waitUntil(lambda: window.session.loaded is not None and not window.link.jobs, timeout=90_000)
    reply = api_client(panel).completions.create(model=MODEL_NAME, prompt="1, 2, 3,", max_tokens=2, **GREEDY)
    assert reply.usage.completion_tokens == 2


def test_a_port_that_is_taken_fails_and_says_why(qtbot, window):
    panel = open_panel(window)
    server = window.features["api"].server
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server.port = taken.getsockname()[1]
        with qtbot.waitSignal(server.sig_failed, timeout=30_000) as signal:
            panel.toggle.click()
    assert server.state == FAILED and "cannot listen" in signal.args[0]
    assert not panel.toggle.isChecked()
