"""The runtime's `attachment.add`: a file into the attachment store (runtime/documents/store.py).

It reads and hashes files, so it runs on the server's pool (its lane in runtime.protocol.methods).
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from pathlib import Path

from runtime.dispatch import DispatchTable
from runtime.documents.store import AttachmentStore
from runtime.protocol import AttachmentAddParams, AttachmentInfo, AttachmentKind, ErrorCode, RpcError, methods

MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024  # a file larger than this is refused before it is read


class AttachmentService:
    def __init__(self, store: AttachmentStore):
        self.store = store

    def register(self, table: DispatchTable) -> None:
        table.handle(methods.ATTACHMENT_ADD, self.add)

    def add(self, params: AttachmentAddParams) -> AttachmentInfo:
        data = read_attachment(params)
        name = params.name or (Path(params.path).name if params.path else "")
        mime = params.mime or mimetypes.guess_type(name)[0] or "application/octet-stream"
        kind: AttachmentKind = "image" if mime.startswith("image/") else "document"
        stored = self.store.put(data, name, mime, kind)
        return AttachmentInfo(stored.id, kind, name, mime, stored.bytes)


def read_attachment(params: AttachmentAddParams) -> bytes:
    """The file's bytes from `path` or `data_base64` (exactly one), or INVALID_PARAMS naming what is wrong."""
    if (params.path is None) == (params.data_base64 is None):
        raise RpcError(ErrorCode.INVALID_PARAMS, "params: give exactly one of path and data_base64")
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
    if len(params.data_base64) > MAX_ATTACHMENT_BYTES * 4 // 3 + 4:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.data_base64: over the {MAX_ATTACHMENT_BYTES}-byte limit")
    try:
        return base64.b64decode(params.data_base64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.data_base64: not valid base64 ({exc})") from None
