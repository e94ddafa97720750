"""The main window chatting with a remote model: a real `lokal serve` on loopback, added as a remote endpoint."""

import os

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from serve_process import MODEL_NAME
from app.chat.controller import ConversationSettings
from app.metrics import figures
from app.models.session import ModelChoice

pytestmark = pytest.mark.slow

SETTINGS = ConversationSettings(temperature=0.0, max_tokens=8, n_ctx=1024, seed=1)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("LOKAL_CONFIG_DIR", str(tmp_path / "config"))  # endpoints of this test only
    from app.main import create_main_window

    win = create_main_window(store_path=tmp_path / "conversations.sqlite3", autoload=False)
    win.chat.default_settings = SETTINGS
    qtbot.addWidget(win)
    win.show()
    yield win
    win.shutdown()


def remote_action(window, label):
    window.model_menu.aboutToShow.emit()
    return next((a for a in window.model_menu.actions() if a.text() == label), None)


def add_loopback(qtbot, window, served):
    hook = window.features["remote"]
    with qtbot.waitSignal(hook.mode.sig_models_changed, timeout=30_000):
        dialog = hook.open_add_dialog()
        dialog.name.setText("loopback")
        dialog.base_url.setText(served.url)
        dialog.key.setText(served.key)
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    return hook


def test_add_endpoint_dialog_refuses_a_bad_url(qtbot, window):
    dialog = window.features["remote"].open_add_dialog()
    dialog.base_url.setText("ftp://somewhere")
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.isVisible() and "http" in dialog.error.text()
    assert window.features["remote"].mode.endpoints.rowCount() == 0


def test_remote_models_appear_in_the_model_menu_and_chat_streams_through_them(qtbot, window, served):
    hook = add_loopback(qtbot, window, served)
    action = remote_action(window, f"{MODEL_NAME}  (loopback)")
    assert action is not None, [a.text() for a in window.model_menu.actions()]
    assert any(a.text() == "Add remote endpoint…" for a in window.model_menu.actions())
    action.trigger()
    assert window.chat.link is hook.mode.chat_link and window.model_button.text().startswith(MODEL_NAME)

    expected = served.openai().chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Name a fruit."}], max_tokens=8, temperature=0.0, top_p=0.95, seed=1)
    with qtbot.waitSignal(window.chat.sig_reply_finished, timeout=120_000) as signal:
        assert window.chat.send("Name a fruit.")
    message = signal.args[0]
    assert message.content == expected.choices[0].message.content
    assert message.record.stats.completion_tokens == expected.usage.completion_tokens
    assert message.record.stats.ttft_ms > 0 and message.record.finish_reason == expected.choices[0].finish_reason
    # The metrics panel's rows come from these figures, as for a local reply.
    shown = {row.key: row.value for row in figures.rows(None, message.record.stats)}
    assert shown["ttft"] == figures.seconds(message.record.stats.ttft_ms) and shown["completion"] == f"{expected.usage.completion_tokens} tokens"
    # Saved like any reply: the store has it.
    saved = window.store.messages(window.chat.current.id)
    assert [m.role for m in saved] == ["user", "assistant"] and saved[-1].content == message.content

    # Menu opened again: the remote section is replaced, not repeated.
    window.model_menu.aboutToShow.emit()
    assert sum(a.text() == "Add remote endpoint…" for a in window.model_menu.actions()) == 1


def test_stop_in_the_window_stops_the_remote_reply(qtbot, window, served):
    window.chat.default_settings = ConversationSettings(temperature=0.0, max_tokens=900, n_ctx=1024)
    hook = add_loopback(qtbot, window, served)
    remote_action(window, f"{MODEL_NAME}  (loopback)").trigger()
    with qtbot.waitSignal(hook.mode.chat_link.sig_delta, timeout=120_000):
        window.chat.send("Count from 1 to 1000.")
    with qtbot.waitSignal(window.chat.sig_reply_finished, timeout=30_000) as signal:
        window.chat.stop()
    assert signal.args[0].state == "stopped" and signal.args[0].content
    served.wait_health(running=False, queued=0)


def local_action(window, model_path):
    window.model_menu.aboutToShow.emit()
    wanted = os.path.realpath(model_path)
    return next((a for a in window.model_menu.actions() if a.data() and os.path.realpath(a.data()) == wanted), None)


def test_a_remote_model_needs_no_local_model(qtbot, window, served):
    assert window.session.wanted is None and not window.composer.can_send  # nothing local: nothing to send to yet
    hook = add_loopback(qtbot, window, served)
    # The local runtime has no figures for a remote reply: nothing asks it for them.
    with qtbot.assertNotEmitted(window.session.sig_loading), qtbot.assertNotEmitted(window.poller.sig_sample):
        remote_action(window, f"{MODEL_NAME}  (loopback)").trigger()
        assert window.composer.can_send and window.model_button.text() == MODEL_NAME
        window.chat.send("Name a fruit.")
        assert window.chat.generating
        with qtbot.waitSignal(window.chat.sig_reply_finished, timeout=120_000) as signal:
            pass
    message = signal.args[0]
    assert message.model == MODEL_NAME  # the remote model's name is stored with the reply
    assert window.store.messages(window.chat.current.id)[-1].model == MODEL_NAME
    assert window.metrics_panel.value_of("ttft").endswith(" ms")  # measured by the client
    assert window.session.wanted is None and window.session.loaded is None

    hook.choose(None)
    assert window.chat.link is window.link and not window.composer.can_send and window.model_button.text() == "No model"


def test_a_remote_model_never_reloads_the_local_one_and_choosing_a_local_one_routes_back(qtbot, window, served, starter_model):
    # A local model loaded with another context size than the conversation asks for: a local reply would reload it.
    window.session.load(ModelChoice(str(starter_model), 2048))
    qtbot.waitUntil(lambda: window.session.loaded is not None, timeout=90_000)
    hook = add_loopback(qtbot, window, served)
    remote_action(window, f"{MODEL_NAME}  (loopback)").trigger()
    with qtbot.assertNotEmitted(window.session.sig_loading), qtbot.waitSignal(window.chat.sig_reply_finished, timeout=120_000) as signal:
        window.chat.send("Name a fruit.")
    assert window.chat.link is hook.mode.chat_link and window.session.loaded.n_ctx == 2048
    # Answered remotely: the remote model's name, and no prefill speed (a client cannot measure it: 0, not a guess).
    assert signal.args[0].model == MODEL_NAME and signal.args[0].record.stats.prefill_tokens_per_s == 0

    qtbot.waitUntil(lambda: local_action(window, starter_model) is not None, timeout=30_000)
    local_action(window, starter_model).trigger()
    assert window.chat.link is window.link and hook.mode.chosen is None
    qtbot.waitUntil(lambda: window.session.loaded is not None and window.session.loading is None, timeout=90_000)
    with qtbot.waitSignal(window.chat.sig_reply_finished, timeout=120_000) as signal:
        window.chat.send("Hi")
    # A local reply carries the runtime's own figures, which a remote one cannot have.
    assert signal.args[0].record.stats.prefill_tokens_per_s > 0, signal.args[0]
    assert signal.args[0].model != MODEL_NAME
