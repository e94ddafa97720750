"""Remote models in the window, plugged into its Model menu as a section of their own.

The section lists the models of every remote endpoint and "Add remote endpoint…". Choosing a
remote model routes the chat's replies through RemoteChatLink (chat.set_reply_link); the user
choosing a model of another section routes them back to the runtime. Where the keyring cannot keep
an endpoint's key, it asks whether to store the key in a 0600 file or nowhere. What it uses of the
window (app/features.py FeatureContext): model_menu (a section, sig_model_chosen), chat
(set_reply_link, any_generating), show_banner, show_status.
"""

from __future__ import annotations

from functools import partial

from app.features import FeatureContext
from app.remote.endpoint_model import Endpoint, RemoteModel
from app.remote.mode import RemoteMode
from app.remote.widgets import AddEndpointDialog, KeyStorageQuestion
from app.ui.language import Context
from app.ui.menus import MenuSection

SECTION = "remote"
Remote = Context("Remote")


class RemoteFeature:
    def __init__(self, context: FeatureContext, mode: RemoteMode | None = None):
        self.context = context
        self.mode = mode or RemoteMode(parent=context.window())
        self.mode.sig_models_changed.connect(context.model_menu.rebuild)
        self.mode.sig_error.connect(lambda message: context.show_banner(Remote.tr("Remote endpoint: {reason}").format(reason=message)))
        self.mode.sig_chosen.connect(self._on_chosen)
        self.mode.endpoints.sig_key_not_stored.connect(self._on_key_not_stored)
        self.key_question: KeyStorageQuestion | None = None
        context.model_menu.add_section(SECTION, self._build_section, order=20)
        # Only the user's choice of another model in the menu routes the chat back: the session also
        # reloads by itself (another context size, a runtime restart), which must not drop the remote model.
        context.model_menu.sig_model_chosen.connect(self._on_model_chosen)
        self.mode.refresh()

    # ---- the model menu ---------------------------------------------------------
    def _build_section(self, section: MenuSection) -> None:
        section.add_heading(Remote.tr("Remote"))
        for model in self.mode.models.models:
            section.add_model(model.label, self.mode.chosen == model, partial(self.choose, model), tooltip=model.endpoint.base_url)
        section.add_action(Remote.tr("Add remote endpoint…"), self.open_add_dialog)

    def _on_model_chosen(self, section_id: str) -> None:
        if section_id != SECTION and self.mode.chosen is not None:
            self.choose(None)

    def open_add_dialog(self) -> AddEndpointDialog:
        dialog = AddEndpointDialog(self.context.window())
        dialog.accepted.connect(lambda: self.mode.add_endpoint(*dialog.values()))
        dialog.open()
        return dialog

    # ---- where the key is kept --------------------------------------------------
    def _on_key_not_stored(self, endpoint: Endpoint, problem: str) -> None:
        endpoints = self.mode.endpoints
        question = KeyStorageQuestion(endpoint.name, problem, str(endpoints.keys.file), self.context.window())
        question.sig_answered.connect(lambda in_file: self._on_key_storage_chosen(endpoint, in_file))
        self.key_question = question
        question.open()

    def _on_key_storage_chosen(self, endpoint: Endpoint, in_file: bool) -> None:
        if in_file:
            self.mode.endpoints.store_key_in_file(endpoint)
            self.context.show_status(Remote.tr("The key for {name} is stored in {file}").format(name=endpoint.name, file=self.mode.endpoints.keys.file), 5000)
        else:
            self.context.show_status(Remote.tr("The key for {name} is used until Lokal quits and stored nowhere").format(name=endpoint.name), 5000)

    # ---- routing the chat -------------------------------------------------------
    def choose(self, model: RemoteModel | None) -> None:
        if self.context.chat.any_generating:
            self.context.show_banner(Remote.tr("Wait for the replies to finish (or stop them) before switching models."))
            return
        self.mode.choose(model)

    def _on_chosen(self, model: RemoteModel | None) -> None:
        chat = self.context.chat
        if model is None:
            chat.set_reply_link(None)
            return
        chat.set_reply_link(self.mode.chat_link, model.model_id)
        self.context.show_status(Remote.tr("Chatting with {model} on {url}").format(model=model.model_id, url=model.endpoint.base_url), 5000)


def install(context: FeatureContext) -> RemoteFeature:
    return context.add_feature("remote", RemoteFeature(context))
