"""Puts the remote mode into the main window without the window knowing about it.

install(window) adds to the Model menu: the models of every remote endpoint,
"Add remote endpoint…" and "Serve the API…"; choosing a remote model routes the
chat's replies through RemoteChatLink, and choosing a local model routes them
back to the runtime. What it needs from the window: model_menu, chat (its
`link`, `generating` and `_on_delta`), session (sig_loading, loaded), link,
model_button, show_banner, statusBar.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout

from app.remote.endpoints import RemoteModel
from app.remote.mode import RemoteMode
from app.remote.widgets import AddEndpointDialog, ApiPanel, add_remote_section

MARK = "lokalRemote"  # a property on the menu actions this hook added, so it can replace them


class WindowHook:
    def __init__(self, window, mode: RemoteMode | None = None):
        self.window = window
        self.mode = mode or RemoteMode(parent=window)
        self.local_link = window.chat.link
        self.mode.chat_link.sig_delta.connect(window.chat._on_delta)
        self.mode.sig_models_changed.connect(self._on_models_changed)
        self.mode.sig_error.connect(lambda message: window.show_banner(f"Remote endpoint: {message}"))
        self.mode.sig_chosen.connect(self._on_chosen)
        # Only the user's choice of a local model in the menu routes the chat back: the session also
        # reloads by itself (another context size, a runtime restart), which must not drop the remote model.
        window.model_menu.triggered.connect(self._on_menu_triggered)
        window.model_menu.aboutToShow.connect(self._add_menu_items)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.mode.server.stop)
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
            panel = ApiPanel(self.mode.server, dialog)
            panel.sig_toggled.connect(self._on_api_toggled)
            buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
            buttons.rejected.connect(dialog.hide)
            layout = QVBoxLayout(dialog)
            layout.addWidget(panel)
            layout.addWidget(buttons)
            dialog.panel = panel
            self.mode.server.sig_failed.connect(lambda message: self.window.show_banner(f"The API: {message}"))
            self.api_dialog = dialog
        self.api_dialog.show()
        return self.api_dialog

    def _on_api_toggled(self, on: bool) -> None:
        if not on:
            self.mode.server.stop()
            return
        loaded = self.window.session.loaded
        if loaded is None:
            self.window.show_banner("Load a model first: the API serves the model the window has loaded.")
            self.api_dialog.panel.toggle.setChecked(False)
            return
        self.mode.server.start(loaded.path, n_ctx=loaded.n_ctx)

    # ---- routing the chat -------------------------------------------------------
    def choose(self, model: RemoteModel | None) -> None:
        if self.window.chat.generating:
            self.window.show_banner("Wait for the reply to finish (or stop it) before switching models.")
            return
        self.mode.choose(model)

    def _on_chosen(self, model: RemoteModel | None) -> None:
        chat = self.window.chat
        if model is None:
            chat.link = self.local_link
            return
        chat.link = self.mode.chat_link
        self.window.model_button.setText(model.label)
        self.window.statusBar().showMessage(f"Chatting with {model.model_id} on {model.endpoint.base_url}", 5000)


def install(window) -> WindowHook:
    window.remote_hook = WindowHook(window)
    return window.remote_hook
