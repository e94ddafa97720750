"""Attachments in the window: what the composer's Attacher is told and tells, Chat ▸ Documents…, the embedding offer.

The composer and the chat view render attachments themselves (app/chat/widgets); this feature keeps
the Attacher in step with the model replies come from (pictures only for one that can see:
ModelLoadResult.vision), says in the banner why a file was not attached, and offers the catalog's
embedding model when a document too large to fit is searched by its words alone (no embedding model is loaded).
"""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMessageBox

from app.attachments.documents import DocumentsModel
from app.attachments.embedding import EmbeddingModel
from app.attachments.kinds import Attachments
from app.attachments.service import Attacher
from app.attachments.widgets.documents_dialog import DocumentsDialog
from app.attachments import words
from app.features import FeatureContext
from app.storage.attachments import StoredAttachment
from app.storage.store import StoreUnavailable
from app.ui.menus import MenuId
from runtime.protocol import CatalogEntry, ModelLoadResult


def can_see(loaded: ModelLoadResult | None) -> bool:
    """Whether the loaded model takes pictures: ModelLoadResult.vision (a projector loaded beside it), False when the
    runtime does not say (one without vision support)."""
    return loaded is not None and bool(getattr(loaded, "vision", False))


class AttachmentsFeature:
    def __init__(self, context: FeatureContext, attacher: Attacher):
        self.context = context
        self.attacher = attacher
        self.documents = DocumentsModel(attacher.store, context.window())
        self.dialog: DocumentsDialog | None = None
        self.embedding = EmbeddingModel(context.link, attacher.store, context.window())
        self.question: QMessageBox | None = None
        self.offered = False  # asked once per window: a second large file does not ask again
        self.action = context.menu(MenuId.CHAT).addAction(Attachments.tr("&Documents…"), self.open_documents)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+D"))
        attacher.sig_problem.connect(context.show_banner)
        attacher.sig_searched_by_words.connect(self.offer_embedding_model)
        self.embedding.sig_started.connect(lambda name: context.show_status(Attachments.tr("Downloading {name}: large documents are searched by meaning too once it is there").format(name=name), 8000))
        self.embedding.sig_loaded.connect(lambda result: context.show_status(Attachments.tr("{name} is loaded: large documents waiting to be sent, and those attached from now on, are searched by meaning too").format(name=result.name), 8000))
        self.embedding.sig_problem.connect(context.show_banner)
        self.embedding.follow_runtime(context.link.state)  # the runtime may be ready already
        context.session.sig_loaded.connect(lambda _result: self.follow_model())
        context.session.sig_loaded.connect(lambda _result: attacher.recheck())  # sizes in tokens are the loaded model's
        self.embedding.sig_loaded.connect(lambda _result: attacher.recheck())  # a large document waiting can be searched now
        context.chat.sig_reply_link_changed.connect(self.follow_model)
        self.follow_model()

    def follow_model(self) -> None:
        """Pictures are offered only when the model replies come from can see."""
        chat, session = self.context.chat, self.context.session
        if chat.local_replies:
            self.attacher.set_model(session.display_name, can_see(session.loaded), n_ctx=session.loaded.n_ctx if session.loaded else 0)
        else:
            self.attacher.set_model(chat.reply_model_name, False, remote=True)  # a remote endpoint gets text only (app/remote/chat_link.py)

    def open_documents(self) -> DocumentsDialog | None:
        try:
            self.documents.refresh()
        except StoreUnavailable as problem:
            self.context.show_banner(problem.message)
            return None
        if self.dialog is None:
            self.dialog = DocumentsDialog(self.documents, self.context.window())
            self.dialog.sig_attach.connect(self._reuse)
        self.dialog.open()
        return self.dialog

    def _reuse(self, chosen: list[StoredAttachment]) -> None:
        for document in chosen:
            self.attacher.reuse(document)

    def offer_embedding_model(self, attachment: StoredAttachment) -> None:
        """The document is searched by its words: offer the catalog's embedding model to search by meaning too (once
        per window; the document is usable meanwhile, so nothing more is said after that)."""
        if self.offered:
            return
        self.offered = True
        self.embedding.find(lambda entry: self._ask(attachment, entry))

    def _ask(self, attachment: StoredAttachment, entry: CatalogEntry) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, Attachments.tr("Search large documents by meaning"), words.searched_by_words(attachment), parent=self.context.window())
        box.setInformativeText(Attachments.tr("Download {name} ({params}), an embedding model, so that Lokal also finds the parts that answer your question in other words?").format(name=entry.name, params=entry.params or entry.repo))
        download = box.addButton(Attachments.tr("Download"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(Attachments.tr("Not now"), QMessageBox.ButtonRole.RejectRole)
        box.buttonClicked.connect(lambda button: self.embedding.download(entry) if button is download else None)
        box.open()  # window-modal, without a nested event loop
        self.question = box


def install(context: FeatureContext) -> AttachmentsFeature:
    return context.add_feature("attachments", AttachmentsFeature(context, context.attacher))
