"""A remote endpoint's key is not handed out carelessly (issue #13), in the real window:

- a key for http:// to another machine is sent only after a warning the person accepts (a loopback proxy
  stands in for the network, so the test sees exactly when the key leaves, and nothing leaves this machine);
- a host typed without a scheme does not silently become http:// unless it is this machine;
- where the keyring fails, the window says so and asks: a 0600 file, or not stored at all.
"""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from PySide6.QtNetwork import QNetworkProxy
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox

from app.remote.keystore import KeyStore


class OpenAIModels:
    """A loopback server that answers GET .../v1/models, directly or as an HTTP proxy, and records each request's URL and key."""

    def __init__(self):
        self.requests: list[tuple[str, str | None]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                hub.requests.append((self.path, self.headers.get("Authorization")))
                body = json.dumps({"object": "list", "data": [{"id": "far-model", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def models_server():
    server = OpenAIModels()
    yield server
    server.close()


@pytest.fixture
def through_proxy(models_server):
    """Every request of the window's network manager goes to the loopback server, whatever host it names."""
    QNetworkProxy.setApplicationProxy(QNetworkProxy(QNetworkProxy.ProxyType.HttpProxy, "127.0.0.1", models_server.port))
    yield models_server
    QNetworkProxy.setApplicationProxy(QNetworkProxy(QNetworkProxy.ProxyType.NoProxy))


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch, no_keyring):
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))  # endpoints and keys of this test only
    from app.main import create_main_window

    win = create_main_window(store_path=tmp_path / "conversations.sqlite3", autoload=False)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.shutdown()


def remote(window):
    return window.features["remote"]


def fill_and_ok(window, base_url, key, name="far"):
    dialog = remote(window).open_add_dialog()
    dialog.name.setText(name)
    dialog.base_url.setText(base_url)
    dialog.key.setText(key)
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    return dialog


def test_a_key_goes_over_http_to_another_machine_only_after_a_warning(qtbot, window, through_proxy):
    mode = remote(window).mode
    dialog = fill_and_ok(window, "http://192.0.2.10:8080/v1", "sk-far-secret")
    qtbot.waitUntil(lambda: dialog.warning is not None and dialog.warning.isVisible(), timeout=5000)
    assert "192.0.2.10" in dialog.warning.text() and "unencrypted" in dialog.warning.text()
    dialog.warning.button(QMessageBox.StandardButton.Cancel).click()
    assert dialog.isVisible() and mode.endpoints.rowCount() == 0
    assert through_proxy.requests == []  # nothing went out

    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: dialog.warning.isVisible(), timeout=5000)
    send = next(b for b in dialog.warning.buttons() if dialog.warning.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole)
    with qtbot.waitSignal(mode.sig_models_changed, timeout=30_000):
        send.click()
    assert through_proxy.requests == [("http://192.0.2.10:8080/v1/models", "Bearer sk-far-secret")]
    assert [m.model_id for m in mode.models.models] == ["far-model"]
    assert mode.endpoints.endpoints[0].key_in_clear_accepted  # remembered: the next start sends it without asking again


def test_a_host_without_a_scheme_is_not_silently_http(qtbot, window, through_proxy):
    dialog = fill_and_ok(window, "192.0.2.10:8080", "sk-far-secret")
    assert dialog.isVisible() and "https://" in dialog.error.text() and "http://" in dialog.error.text()
    assert dialog.warning is None and remote(window).mode.endpoints.rowCount() == 0 and through_proxy.requests == []


@pytest.mark.parametrize("answer", ["file", "nowhere"])
def test_a_keyring_failure_is_said_and_the_person_chooses_where_the_key_goes(qtbot, window, models_server, tmp_path, answer):
    mode = remote(window).mode
    with qtbot.waitSignal(mode.sig_models_changed, timeout=30_000):
        fill_and_ok(window, f"http://127.0.0.1:{models_server.port}/v1", "sk-loopback")  # this machine: no http warning
    question = remote(window).key_question
    qtbot.waitUntil(lambda: question is not None and question.isVisible(), timeout=5000)
    assert "keyring" in question.text() and "no keyring" in question.text()
    key_file = tmp_path / "config" / "remote-keys.json"
    assert not key_file.exists()  # nothing written before the person chose

    (question.file_button if answer == "file" else question.nowhere_button).click()
    (endpoint,) = mode.endpoints.endpoints
    assert mode.endpoints.key_for(endpoint) == "sk-loopback"  # this session works either way
    assert models_server.requests[-1] == ("/v1/models", "Bearer sk-loopback")
    after_restart = KeyStore(file=key_file).get(endpoint.id)
    if answer == "file":
        assert oct(os.stat(key_file).st_mode & 0o777) == "0o600" and after_restart == "sk-loopback"
    else:
        assert after_restart == "" and (not key_file.exists() or "sk-loopback" not in key_file.read_text())


def test_a_keyring_that_cannot_be_read_is_said_in_the_window(qtbot, tmp_path, monkeypatch, models_server):
    import keyring.core
    from keyring.backend import KeyringBackend
    from keyring.errors import KeyringLocked

    class LockedKeyring(KeyringBackend):
        """A real keyring backend (the interface the OS ones implement) whose store stays locked."""

        priority = 1

        def get_password(self, service, username):
            raise KeyringLocked("the login keyring is locked")

        def set_password(self, service, username, password):
            raise KeyringLocked("the login keyring is locked")

        def delete_password(self, service, username):
            raise KeyringLocked("the login keyring is locked")

    config = tmp_path / "config"
    config.mkdir()
    (config / "remote-endpoints.json").write_text(json.dumps([{"id": "e1", "name": "Home", "base_url": f"http://127.0.0.1:{models_server.port}/v1"}]))
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(config))
    previous = keyring.core.get_keyring()
    keyring.core.set_keyring(LockedKeyring())
    try:
        from app.main import create_main_window

        win = create_main_window(store_path=tmp_path / "conversations.sqlite3", autoload=False)
        qtbot.addWidget(win)
        win.show()
        try:
            qtbot.waitUntil(lambda: win.banner.isVisible() and "keyring could not be read" in win.banner_text.text(), timeout=5000)
            assert "locked" in win.banner_text.text()
        finally:
            win.shutdown()
    finally:
        keyring.core.set_keyring(previous)
