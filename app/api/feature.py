"""Model ▸ Serve the API…: the API toggle plugged into the window's Model menu as a section of its own.

It also says, in the status bar, why a reply of the window's does not stream yet while it waits for
a reply the API is generating (the runtime's `job.waiting`), and asks before a close would stop the
API (app/api/background.py: stop and quit, or keep serving in the background).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout

from app.api.background import CloseWhileServing
from app.api.panel import ApiPanel
from app.api.server import ApiServer
from app.features import FeatureContext
from app.ui.accessibility import describe_buttons
from app.ui.language import Context
from app.ui.menus import MenuSection
from runtime.protocol import JobWaiting

SECTION = "api"
Api = Context("Api")


class ApiFeature:
    def __init__(self, context: FeatureContext, tray_available: bool | None = None):
        self.context = context
        self.server = ApiServer(context.link, context.window())
        self.server.sig_failed.connect(lambda message: context.show_banner(Api.tr("The API: {reason}").format(reason=message)))
        self.dialog: QDialog | None = None
        self.panel: ApiPanel | None = None
        self._waiting_shown = False
        context.model_menu.add_section(SECTION, self._build_section, order=30)
        context.link.sig_notification.connect(self._on_runtime_notification)
        context.link.sig_delta.connect(self._end_waiting)
        context.chat.sig_generating_changed.connect(self._end_waiting)
        self.closing = CloseWhileServing(context, self.server, tray_available)

    def _build_section(self, section: MenuSection) -> None:
        section.add_action(Api.tr("Serve the API…"), self.open_dialog)

    def open_dialog(self) -> QDialog:
        if self.dialog is None:
            self.dialog = QDialog(self.context.window())
            self.dialog.setWindowTitle(Api.tr("OpenAI-compatible API"))
            self.panel = ApiPanel(self.server, self.dialog)
            self.panel.sig_toggled.connect(self._on_toggled)
            buttons = describe_buttons(QDialogButtonBox(QDialogButtonBox.StandardButton.Close))
            buttons.rejected.connect(self.dialog.hide)
            layout = QVBoxLayout(self.dialog)
            layout.addWidget(self.panel)
            layout.addWidget(buttons)
        self.dialog.show()
        return self.dialog

    def _on_toggled(self, on: bool) -> None:
        if not on:
            self.server.stop()
            return
        if self.context.session.wanted is None:
            self.context.show_banner(Api.tr("Load a model first: the API serves the model the window has loaded."))
            if self.panel is not None:
                self.panel.toggle.setChecked(False)
            return
        self.server.start()

    def _on_runtime_notification(self, method: str, params: object) -> None:
        if isinstance(params, JobWaiting) and self.context.chat.reply_for_call(params.request_id) is not None:
            self._waiting_shown = True
            self.context.show_status(Api.tr("Waiting for the reply the API is generating; yours comes next…"))

    def _end_waiting(self, *_args: Any) -> None:
        if self._waiting_shown:
            self._waiting_shown = False
            self.context.clear_status()


def install(context: FeatureContext) -> ApiFeature:
    return context.add_feature("api", ApiFeature(context))
