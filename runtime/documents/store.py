"""The attachment store: each file's bytes kept once, under the sha256 of its bytes, in the runtime's data dir.

Content addressing makes attaching idempotent: the same PDF attached in two conversations (or twice in
one, or sent again through the API) is one file, its text is extracted once and its chunks embedded
once (runtime/documents/index.py keys everything by the same hash). The id is also what a message
carries (runtime.protocol.Attachment.id), so a conversation refers to its files without resending them.

Layout: `<root>/<aa>/<sha256>` for the bytes (fanned out by the first two hex digits so no folder grows
huge) and `<sha256>.json` beside it for what the runtime learned of the file (name, mime, kind).
Writes go to a temporary file renamed into place, so a crash never leaves half a file under a hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from runtime.private_files import private_dir

SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class StoredFile:
    id: str
    name: str
    mime: str
    kind: str
    bytes: int


class AttachmentStore:
    def __init__(self, root: Path):
        self.root = private_dir(root)

    def put(self, data: bytes, name: str, mime: str, kind: str) -> StoredFile:
        """Keep `data` (once: a file already stored is not written again) and return its record."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.path(digest)
        if not path.exists():
            write_atomic(path, data)
        record = StoredFile(digest, name, mime, kind, len(data))
        write_atomic(path.with_name(digest + ".json"), json.dumps(asdict(record)).encode())
        return record

    def get(self, attachment_id: str) -> bytes:
        """The stored bytes of `attachment_id`; KeyError when no such file is stored."""
        path = self.path(attachment_id)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise KeyError(attachment_id) from None

    def record(self, attachment_id: str) -> StoredFile:
        path = self.path(attachment_id).with_name(attachment_id + ".json")
        try:
            return StoredFile(**json.loads(path.read_text()))
        except FileNotFoundError:
            raise KeyError(attachment_id) from None

    def has(self, attachment_id: str) -> bool:
        return self.path(attachment_id).exists()

    def path(self, attachment_id: str) -> Path:
        if not SHA256_HEX.match(attachment_id):
            raise KeyError(attachment_id)
        return self.root / attachment_id[:2] / attachment_id


def write_atomic(path: Path, data: bytes) -> None:
    """All of `data` at `path` or none: a reader at the same moment (the same file attached twice at once) never
    sees it half written."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
