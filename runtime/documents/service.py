"""The runtime's attachment.add, embedding.load and embedding.unload (runtime/documents/library.py does the work).

They read, hash, extract and embed files, or load a model, so they run on the server's pool (their
lane in runtime.protocol.methods), never in the engine's job slot: a reply streams meanwhile.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import threading
from pathlib import Path
from typing import Any, Callable

from runtime.dispatch import ANSWERING, DispatchTable
from runtime.documents.library import DocumentLibrary
from runtime.embeddings.model import EmbeddingModel
from runtime.pacing import PacedProgress
from runtime.protocol import (
    AttachmentAddParams,
    AttachmentInfo,
    AttachmentKind,
    AttachmentProgress,
    EmbeddingLoadParams,
    EmbeddingLoadResult,
    EmbeddingUnloadResult,
    Empty,
    ErrorCode,
    RpcError,
    methods,
)

MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024  # a file larger than this is refused before it is read


class AttachmentService:
    def __init__(self, library: DocumentLibrary, notify: Callable[[str, Any], None] = lambda _method, _params: None,
                 replying: Callable[[], bool] = lambda: False):
        """`replying`: whether a reply is on its way (EmbeddingModel's `busy`: it then takes half the cores)."""
        self.library = library
        self._notify = notify
        self._replying = replying
        self._loading = threading.Lock()  # one embedding model load at a time

    def register(self, table: DispatchTable) -> None:
        table.handle(methods.ATTACHMENT_ADD, self.add)
        table.handle(methods.EMBEDDING_LOAD, self.load_embedding)
        table.handle(methods.EMBEDDING_UNLOAD, self.unload_embedding)

    def add(self, params: AttachmentAddParams) -> AttachmentInfo:
        if (params.path is not None) + (params.data_base64 is not None) + (params.id is not None) != 1:
            raise RpcError(ErrorCode.INVALID_PARAMS, "params: give exactly one of path, data_base64 and id")
        progress = self._progress(ANSWERING.get())
        if params.id is not None:
            return self.again(params.id, params.name, params.mime, progress)
        data = read_attachment(params)
        name = params.name or (Path(params.path).name if params.path else "")
        mime = params.mime or guess_mime(name)
        kind: AttachmentKind = "image" if mime.startswith("image/") else "document"
        return self.library.add(data, name, mime, kind, progress)

    def _progress(self, request_id: int | str | None) -> Callable[[int, int], None]:
        """attachment.progress for this request, a few a second at most: embedding a large document's chunks takes minutes."""
        if request_id is None:
            return lambda _done, _total: None
        return PacedProgress(lambda done, total: self._notify("attachment.progress", AttachmentProgress(request_id, done, total)))

    def again(self, attachment_id: str, name: str, mime: str, progress: Callable[[int, int], None] | None = None) -> AttachmentInfo:
        """An attachment stored before, as the model loaded now takes it (its size in tokens, whether it fits)."""
        try:
            stored = self.library.store.record(attachment_id)
        except KeyError:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.id: no attachment {attachment_id[:80]!r} is stored here: add it by path or data_base64") from None
        name, mime = name or stored.name, mime or stored.mime
        if stored.kind != "document":
            return AttachmentInfo(attachment_id, "image", name, mime, stored.bytes)
        return self.library.info(attachment_id, name, mime, progress)

    def load_embedding(self, params: EmbeddingLoadParams) -> EmbeddingLoadResult:
        with self._loading:
            model = EmbeddingModel(params.path, params.n_threads or None, busy=self._replying)
            previous, self.library.embedder = self.library.embedder, model
            if previous is not None:
                previous.close()
        return EmbeddingLoadResult(model.name, model.path, model.identity, model.dimensions, model.n_ctx)

    def unload_embedding(self, _params: Empty) -> EmbeddingUnloadResult:
        with self._loading:
            previous, self.library.embedder = self.library.embedder, None
            if previous is not None:
                previous.close()
        return EmbeddingUnloadResult(previous is not None)


def guess_mime(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def read_attachment(params: AttachmentAddParams) -> bytes:
    """The file's bytes from `path` or `data_base64` (AttachmentService.add checked there is one), or INVALID_PARAMS naming what is wrong."""
    if params.path is not None:
        path = Path(params.path)
        try:
            size = path.stat().st_size
            if size > MAX_ATTACHMENT_BYTES:
                raise RpcError(ErrorCode.INVALID_PARAMS, f"params.path: {size} bytes is over the {MAX_ATTACHMENT_BYTES}-byte limit")
            return path.read_bytes()
        except OSError as exc:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.path: cannot read {params.path}: {exc.strerror or exc}") from None
    assert params.data_base64 is not None
    return decode_base64(params.data_base64, "params.data_base64")


def decode_base64(text: str, field: str) -> bytes:
    if len(text) > MAX_ATTACHMENT_BYTES * 4 // 3 + 4:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"{field}: over the {MAX_ATTACHMENT_BYTES}-byte limit")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"{field}: not valid base64 ({exc})") from None
