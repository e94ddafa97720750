"""Puts the remote mode into the main window without the window knowing about it.

install(window) adds to the Model menu: the models of every remote endpoint,
"Add remote endpoint…" and "Serve the API…"; choosing a remote model routes the
chat's replies through RemoteChatLink (chat.set_reply_link), and choosing a
local model routes them back to the runtime. "Serve the API…" has the window's
own runtime serve the API (ApiServer). What it needs from the window:
model_menu, chat (set_reply_link, generating, reply), session (wanted), link,
show_banner, statusBar.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout

from app.remote.endpoints import RemoteModel
from app.remote.mode import RemoteMode
from app.remote.serve import ApiServer
from app.remote.widgets import AddEndpointDialog, ApiPanel, add_remote_section

MARK = "lokalRemote"  # a property on the menu actions this hook added, so it can replace them


class WindowHook:
    def __init__(self, window, mode: RemoteMode | None = None):
        self.window = window
        self.mode = mode or RemoteMode(parent=window)
        self.api_server = ApiServer(window.link, window)
        self.mode.sig_models_changed.connect(self._on_models_changed)
        self.mode.sig_error.connect(lambda message: window.show_banner(f"Remote endpoint: {message}"))
        self.mode.sig_chosen.connect(self._on_chosen)
        # Only the user's choice of a local model in the menu routes the chat back: the session also
        # reloads by itself (another context size, a runtime restart), which must not drop the remote model.
        window.model_menu.triggered.connect(self._on_menu_triggered)
        window.model_menu.aboutToShow.connect(self._add_menu_items)
        # A reply of the window's that waits for one the API is generating: say why nothing streams yet.
        window.link.sig_notification.connect(self._on_runtime_notification)
        window.link.sig_delta.connect(self._end_waiting)
        window.chat.sig_generating_changed.connect(self._end_waiting)
        self._waiting_shown = False
        self.api_dialog: QDialog | None = None
        self.mode.refresh()

    # ---- the model menu ---------------------------------------------------------
    def _add_menu_items(self) -> None:
        menu = self.window.model_menu
        for action in menu.actions():
            if action.property(MARK):
                menu.removeAction(action)
        before = set(menu.actions())
        add_remote_section(menu, self.mode.models, self.mode.chosen, self.choose, self.open_add_dialog)
        menu.addAction("Serve the API…", self.open_api_dialog)
        for action in menu.actions():
            if action not in before:
                action.setProperty(MARK, True)

    def _on_menu_triggered(self, action) -> None:
        local_model = not action.property(MARK) and (action.isCheckable() or bool(action.data()))
        if local_model and self.mode.chosen is not None:
            self.choose(None)

    def _on_models_changed(self) -> None:
        if self.window.model_menu.isVisible():
            self._add_menu_items()

    def open_add_dialog(self) -> AddEndpointDialog:
        dialog = AddEndpointDialog(self.window)
        dialog.accepted.connect(lambda: self.mode.add_endpoint(*dialog.values()))
        dialog.open()
        return dialog

    def open_api_dialog(self) -> QDialog:
        if self.api_dialog is None:
            dialog = QDialog(self.window)
            dialog.setWindowTitle("OpenAI-compatible API")
            panel = ApiPanel(self.api_server, dialog)
            panel.sig_toggled.connect(self._on_api_toggled)
            buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
            buttons.rejected.connect(dialog.hide)
            layout = QVBoxLayout(dialog)
            layout.addWidget(panel)
            layout.addWidget(buttons)
            dialog.panel = panel
            self.api_server.sig_failed.connect(lambda message: self.window.show_banner(f"The API: {message}"))
            self.api_dialog = dialog
        self.api_dialog.show()
        return self.api_dialog

    def _on_api_toggled(self, on: bool) -> None:
        if not on:
            self.api_server.stop()
            return
        if self.window.session.wanted is None:
            self.window.show_banner("Load a model first: the API serves the model the window has loaded.")
            self.api_dialog.panel.toggle.setChecked(False)
            return
        self.api_server.start()

    def _on_runtime_notification(self, method: str, params: dict) -> None:
        if method == "job.waiting" and self.window.chat.reply_for_call(params.get("request_id")) is not None:
            self._waiting_shown = True
            self.window.statusBar().showMessage("Waiting for the reply the API is generating; yours comes next…")

    def _end_waiting(self, *_args) -> None:
        if self._waiting_shown:
            self._waiting_shown = False
            self.window.statusBar().clearMessage()

    # ---- routing the chat -------------------------------------------------------
    def choose(self, model: RemoteModel | None) -> None:
        if self.window.chat.any_generating:
            self.window.show_banner("Wait for the replies to finish (or stop them) before switching models.")
            return
        self.mode.choose(model)

    def _on_chosen(self, model: RemoteModel | None) -> None:
        chat = self.window.chat
        if model is None:
            chat.set_reply_link(None)
            return
        chat.set_reply_link(self.mode.chat_link, model.model_id)
        self.window.statusBar().showMessage(f"Chatting with {model.model_id} on {model.endpoint.base_url}", 5000)


def install(window) -> WindowHook:
    window.remote_hook = WindowHook(window)
    return window.remote_hook
