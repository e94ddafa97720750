"""Attacher: a file, a dropped or pasted picture, or a document from the Documents list, onto the message being written.

Each goes through the runtime's `attachment.add` (runtime/documents), which stores the bytes by their
sha256, extracts a document's text once and answers with its size in tokens for the loaded model; a
document waiting to be sent is asked for again, by its id, whenever another model is loaded (recheck).
What the window can tell at once (the format, a folder, an unreadable or oversized file, a picture for
a model that cannot see) is refused here, before anything is sent (kinds.py); what only the runtime
can tell (a PDF it cannot parse) comes back as its error. Either way the user reads why, the other
attachments and the text typed so far stay as they were.

A picture is also decoded here: a broken one is refused before the runtime sees it, and its thumbnail
and bytes are kept with the message (app/storage/attachments.py) so a reopened conversation shows it.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from app.attachments import kinds, pictures
from app.attachments.kinds import Refusal, Attachments
from app.attachments.pending import PendingAttachments
from app.runtime_link import RuntimeLink
from app.storage.attachments import StoredAttachment
from app.storage.store import Store, StoreUnavailable
from runtime.protocol import AttachmentAddParams, AttachmentInfo, AttachmentProgress, RpcError, methods

log = logging.getLogger("lokal.attachments")
# Pasted text longer than this many characters a token of the context cannot go in the message (text runs 3.61-3.84
# characters a token at most in the starter model's tokenizer: prose, Python, Indonesian; logs and JSON 1.49-1.79,
# bench/chars_per_token.py), so it is attached as a file instead, as LM Studio and Claude do: searched for what the
# question needs, not refused.
PASTE_CHARS_PER_TOKEN = 4
PASTE_AS_FILE_CHARS = 20_000  # where no model is loaded yet: its context is not known
ADD_TIMEOUT_MS = 600_000  # a large document is extracted and its chunks embedded before the answer (minutes on a slow CPU)


class Attacher(QObject):
    sig_problem = Signal(str)  # why a file was not attached (nothing else changed)
    sig_searched_by_words = Signal(object)  # a StoredAttachment too large to fit whole, searched by its words alone (no embedding model)
    sig_changed = Signal()  # an attachment was added, answered or removed: the composer updates its Send button

    def __init__(self, link: RuntimeLink, store: Store, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self.store = store
        self.pending = PendingAttachments(self)
        self.vision = False  # the loaded model can see pictures (ModelLoadResult.vision)
        self.model_name = ""  # the loaded model, named when a picture is refused
        self.n_ctx = 0  # the loaded model's context, in tokens (0: none loaded)
        self.remote = False  # replies come from a remote endpoint, which gets text only (app/remote): nothing can be attached
        for signal in (self.pending.rowsInserted, self.pending.rowsRemoved, self.pending.dataChanged, self.pending.modelReset):
            signal.connect(self.sig_changed)
        self._reading: dict[int | str, int] = {}  # attachment.add requests in flight: their pending attachment's key
        link.sig_notification.connect(self._on_notification)

    def set_model(self, name: str, vision: bool, remote: bool = False, n_ctx: int = 0) -> None:
        """The model replies come from now, whether it can see pictures (pictures are offered only then), whether it
        is a remote endpoint's (attachments are read by Lokal's own runtime, and never reach one), and its context."""
        self.model_name = name
        self.vision = vision and not remote
        self.remote = remote
        self.n_ctx = n_ctx

    def pastes_as_file(self, chars: int) -> bool:
        """Whether pasted text of this length is attached as a file: it cannot fit the model's context as a message."""
        limit = PASTE_CHARS_PER_TOKEN * self.n_ctx if self.n_ctx else PASTE_AS_FILE_CHARS
        return not self.remote and chars > limit

    def _remote_refusal(self, name: str) -> bool:
        return self._refuse(Refusal(name, Attachments.tr(
            "replies come from a remote endpoint ({model}), which Lokal sends text only. Choose a local model to attach files."
        ).format(model=self.model_name)))

    # ---- adding ----------------------------------------------------------------
    def add_paths(self, paths: list[str]) -> int:
        """Attach these files; how many were taken (each refused one is said, with why)."""
        return sum(self.add_path(path) for path in paths)

    def add_path(self, path: str) -> bool:
        name = Path(path).name
        if self.remote:
            return self._remote_refusal(name)
        kind, refusal = kinds.check_file(path, self.vision, self.model_name)
        if refusal is not None or kind is None:
            return self._refuse(refusal or Refusal(name, ""))
        if kind == "image":
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                return self._refuse(Refusal(name, Attachments.tr("it cannot be read ({error}).").format(error=exc.strerror or exc)))
            return self._add_picture(name, kinds.mime_of(name), data, AttachmentAddParams(name, kinds.mime_of(name), path=str(path)))
        key = self.pending.add(name, kind)
        self._send(key, name, AttachmentAddParams(name, kinds.mime_of(name), path=str(path)), b"", b"")
        return True

    def add_image(self, image: QImage, name: str = "") -> bool:
        """A picture from the clipboard (or dropped as image data): sent as PNG bytes."""
        name = name or Attachments.tr("pasted picture.png")
        if self.remote:
            return self._remote_refusal(name)
        if not self.vision:
            return self._refuse(Refusal(name, kinds.no_vision_reason(self.model_name)))
        data = pictures.png_bytes(image)
        refusal = kinds.check_size(name, "image", len(data))
        if refusal is not None:
            return self._refuse(refusal)
        return self._add_picture(name, "image/png", data, AttachmentAddParams(name, "image/png", data_base64=base64.b64encode(data).decode("ascii")))

    def add_text(self, text: str) -> bool:
        """Long text pasted into the message box, as a document: "pasted text.txt", "pasted text 2.txt", …"""
        stem = Attachments.tr("pasted text")
        taken = {item.name for item in self.pending.items}
        name, number = f"{stem}.txt", 1
        while name in taken:
            number += 1
            name = f"{stem} {number}.txt"
        if self.remote:
            return self._remote_refusal(name)
        data = text.encode("utf-8")
        refusal = kinds.check_size(name, "document", len(data))
        if refusal is not None:
            return self._refuse(refusal)
        key = self.pending.add(name, "document")
        self._send(key, name, AttachmentAddParams(name, "text/plain", data_base64=base64.b64encode(data).decode("ascii")), b"", b"")
        return True

    def reuse(self, attachment: StoredAttachment) -> None:
        """A document from the Documents list: the runtime has it stored (and embedded) under its id already; it
        says again what it is to the model loaded now (its size in tokens was the model's of the time)."""
        if self.remote:
            self._remote_refusal(attachment.name)
            return
        key = self.pending.add(attachment.name, attachment.kind)
        self._send(key, attachment.name, AttachmentAddParams(attachment.name, attachment.mime, id=attachment.id), attachment.thumbnail, attachment.image)

    def recheck(self) -> None:
        """The model changed (or none was loaded when they were attached): each document waiting to be sent is
        asked for again, so its chip gives its size for the model that will read it, and whether it fits whole."""
        for item in self.pending.items:
            attached = item.attachment
            if attached is not None and attached.kind == "document" and not self.remote:
                self._send(item.key, attached.name, AttachmentAddParams(attached.name, attached.mime, id=attached.id), b"", b"")

    def remove(self, key: int) -> None:
        self.pending.remove(key)

    def take(self) -> list[StoredAttachment]:
        """The attachments to send with the message (the composer clears them once it is stored: sent())."""
        return self.pending.ready()

    def _add_picture(self, name: str, mime: str, data: bytes, params: AttachmentAddParams) -> bool:
        image = pictures.decode(data)
        if image is None:
            return self._refuse(Refusal(name, Attachments.tr("it is not a picture Lokal can read (the file is damaged, or not the format its name says).")))
        key = self.pending.add(name, "image")
        self._send(key, name, params, pictures.thumbnail(image), data)
        return True

    def _send(self, key: int, name: str, params: AttachmentAddParams, thumbnail: bytes, image: bytes) -> None:
        def added(info: AttachmentInfo) -> None:
            self._reading.pop(call.id, None)
            self._on_added(key, info, thumbnail, image)

        def failed(error: RpcError) -> None:
            self._reading.pop(call.id, None)
            self._on_failed(key, name, error)

        call = self.link.call(methods.ATTACHMENT_ADD, params, on_result=added, on_error=failed, timeout_ms=ADD_TIMEOUT_MS)
        self._reading[call.id] = key

    def _on_notification(self, _method: str, params: object) -> None:
        """A large document's parts embedded so far, on its chip (the runtime's attachment.progress)."""
        if isinstance(params, AttachmentProgress) and params.total > 0:
            key = self._reading.get(params.request_id)
            if key is not None:
                self.pending.set_progress(key, params.done / params.total)

    def _on_added(self, key: int, info: AttachmentInfo, thumbnail: bytes, image: bytes) -> None:
        attachment = StoredAttachment(
            info.id, info.kind, info.name, info.mime, info.bytes, info.tokens, info.pages, info.fits_whole, info.searchable, info.note,
            thumbnail=thumbnail, image=image, words_only=info.words_only, document_budget=info.document_budget,
        )
        if not self.pending.resolve(key, attachment):
            return  # removed while the runtime read it
        if attachment.kind == "document":
            try:
                self.store.remember_attachment(attachment)  # in the Documents list from now on, sent or not
            except StoreUnavailable as exc:
                log.warning("the Documents list could not keep %s: %s", attachment.name, exc)
            if info.words_only:
                self.sig_searched_by_words.emit(attachment)

    def _on_failed(self, key: int, name: str, error: RpcError) -> None:
        if self.pending.row_of(key) < 0:
            return
        self.pending.remove(key)
        self._refuse(Refusal(name, error.message.removeprefix(f"{name}: ")))  # the runtime's message may name the file too

    def _refuse(self, refusal: Refusal) -> bool:
        log.info("not attached: %s", refusal.message)
        self.sig_problem.emit(refusal.message)
        return False

