"""Edit ▸ Search all conversations… (Ctrl+K) and Edit ▸ Find in this conversation… (Ctrl+F).

Opening a hit opens its conversation and asks the chat controller to reveal the message:
`reveal_message(message_id)` shows it (loading older messages if it is not on screen yet, and, with
branches, switching to the branch that holds it) and scrolls to it.
"""

from __future__ import annotations

from app.features import FeatureContext
from app.search import query
from app.search.dialog import SearchDialog
from app.search.service import SearchService
from app.ui.language import Context
from app.ui.menus import MenuId, add_command

Search = Context("Search")


class SearchFeature:
    def __init__(self, context: FeatureContext):
        self.context = context
        self.service = SearchService(context.chat.store.path, context.window())
        self.dialog: SearchDialog | None = None
        menu = context.menu(MenuId.EDIT)
        menu.addSeparator()
        self.action_search = add_command(menu, Search.tr("Search all &conversations…"), self.search_all, "Ctrl+K")
        self.action_find = add_command(menu, Search.tr("&Find in this conversation…"), self.find_here, "Ctrl+F")
        context.chat.sig_current_changed.connect(lambda conv: self.action_find.setEnabled(conv is not None))
        self.action_find.setEnabled(context.chat.current is not None)

    def _dialog(self) -> SearchDialog:
        if self.dialog is None:
            self.dialog = SearchDialog(self.service, self.context.window())
            self.dialog.sig_open.connect(self.open_hit)
        return self.dialog

    def search_all(self) -> SearchDialog:
        dialog = self._dialog()
        dialog.start(None)
        return dialog

    def find_here(self) -> SearchDialog | None:
        conv = self.context.chat.current
        if conv is None:
            return None
        dialog = self._dialog()
        dialog.start(conv.id, conv.title)
        return dialog

    def open_hit(self, conversation_id: str, message_id: int) -> bool:
        """Open the conversation and show the message; False if it is gone (deleted since the search)."""
        chat = self.context.chat
        chat.open(conversation_id)
        if chat.current is None or chat.current.id != conversation_id:
            self.context.show_status(Search.tr("That conversation is no longer there"), 4000)
            return False
        words = query.typed_words(self.dialog.box.text()) if self.dialog is not None else []
        if not chat.reveal_message(message_id, words):
            self.context.show_status(Search.tr("That message is no longer there"), 4000)
            return False
        return True


def install(context: FeatureContext) -> SearchFeature:
    return context.add_feature("search", SearchFeature(context))
