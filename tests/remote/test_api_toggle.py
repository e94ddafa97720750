"""The window's "Serve the API" toggle starts a real `lokal serve`, shows its URL and key, and stops it."""

import pytest

from api.serve_process import MODEL_NAME
from app.remote.client import RemoteClient
from app.remote.endpoints import Endpoint
from app.remote.serve import FAILED, READY, STOPPED, ApiServer
from app.remote.widgets import ApiPanel

pytestmark = pytest.mark.slow


def test_toggle_serves_the_model_and_the_remote_mode_reaches_it(qtbot, starter_model):
    server = ApiServer()
    panel = ApiPanel(server)
    qtbot.addWidget(panel)
    panel.sig_toggled.connect(lambda on: server.start(str(starter_model), port=0, n_ctx=512, extra_args=["--n-threads", "1"]) if on else server.stop())
    with qtbot.waitSignal(server.sig_state_changed, timeout=120_000, check_params_cb=lambda s: s == READY):
        panel.toggle.click()
    assert panel.toggle.isChecked() and panel.status.text() == "Serving"
    assert panel.url.text().startswith("http://127.0.0.1:") and panel.url.text().endswith("/v1")
    assert panel.key.text() == server.key and server.key.startswith("lokal-")

    # What the panel shows is enough for a client to chat.
    client = RemoteClient()
    endpoint = Endpoint("self", "this machine", panel.url.text())
    with qtbot.waitSignal(client.sig_models, timeout=30_000) as signal:
        client.list_models(endpoint, panel.key.text())
    assert signal.args[1] == [MODEL_NAME]

    with qtbot.waitSignal(server.sig_state_changed, timeout=30_000, check_params_cb=lambda s: s == STOPPED):
        panel.toggle.click()
    assert not panel.toggle.isChecked() and panel.url.text() == "" and not server.running


def test_a_server_that_cannot_start_says_why(qtbot, tmp_path):
    server = ApiServer()
    missing = tmp_path / "missing.gguf"
    with qtbot.waitSignal(server.sig_failed, timeout=60_000) as signal:
        server.start(str(missing), port=0)
    assert server.state == FAILED
    assert "missing.gguf" in signal.args[0]
    with qtbot.waitSignal(server.sig_state_changed, timeout=30_000, check_params_cb=lambda s: s == STOPPED), qtbot.assertNotEmitted(server.sig_failed):
        server.stop()
