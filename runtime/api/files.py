"""The API's `file` content parts (OpenAI's `{"type": "file", "file": {"filename", "file_data"}}`): documents in a user turn.

Each file is stored as the window's attachments are (runtime/documents: content-addressed, text
extracted once, embedded once when too large to go whole), and its turn carries the Attachment, so it
takes the same path: the whole text in the turn when it fits, its retrieved chunks when not. The same
file sent again with the next turn is found by its hash, neither extracted nor embedded again, and
the turn renders to the same tokens, so the KV cache covers it.

Refused with a 4xx naming the part: a `file_id` (this server keeps no uploaded files), base64 that does
not decode, a picture or other media (pictures are `image_url` parts), a file over MAX_FILE_BYTES, and a
file whose text cannot be read (a broken PDF, a binary).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import re

from runtime.api import errors, schema
from runtime.api.backend import Backend
from runtime.documents.service import guess_mime
from runtime.protocol import ChatMessage, RpcError

MAX_FILE_BYTES = 16 * 1024 * 1024  # one file part, decoded (the request body's own limit, --max-body, applies too)
DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*;base64,(?P<data>.*)$", re.DOTALL)
MEDIA = ("image/", "audio/", "video/")


async def attach_files(backend: Backend, body: list[schema.Message], messages: list[ChatMessage]) -> None:
    """Store each message's file parts and give its ChatMessage their attachments (in place)."""
    for m_index, (message, out) in enumerate(zip(body, messages)):
        if not isinstance(message.content, list):
            continue
        for p_index, part in enumerate(message.content):
            if not isinstance(part, schema.FilePart):
                continue
            param = f"messages[{m_index}].content[{p_index}].file"
            if message.role != "user":
                raise errors.bad_request(f"{param}: files go in user messages, not {message.role} ones", param=param)
            name, mime, data = decode_file(part.file, param)
            try:
                attachment = await asyncio.to_thread(backend.engine.store_document, data, name, mime)
            except RpcError as exc:
                raise errors.bad_request(f"{param}: {exc.message}", param=param, code="invalid_file") from None
            out.attachments.append(attachment)


def decode_file(file: schema.FileData, param: str) -> tuple[str, str, bytes]:
    """(name, mime, bytes) of a file part; ApiError naming the part for anything wrong with it."""
    if file.file_id is not None:
        raise errors.bad_request(f"{param}.file_id: this server keeps no uploaded files; send the file itself in file_data (base64)", param=f"{param}.file_id")
    if not file.file_data:
        raise errors.bad_request(f"{param}.file_data: required (the file's bytes, base64 or a data: URL)", param=f"{param}.file_data")
    name = file.filename or ""
    text = file.file_data
    mime = ""
    if text.startswith("data:"):
        match = DATA_URL.match(text)
        if match is None:
            raise errors.bad_request(f"{param}.file_data: a data: URL must be base64 (data:<type>;base64,...)", param=f"{param}.file_data")
        mime, text = match.group("mime") or "", match.group("data")
    mime = mime or guess_mime(name)
    if mime.startswith(MEDIA):
        what = "pictures go in image_url parts" if mime.startswith("image/") else "audio and video are not supported"
        raise errors.bad_request(f"{param}: {mime} is not a document ({what}); files may be text, Markdown, code, CSV, HTML, PDF or DOCX", param=param, code="unsupported_file_type")
    if len(text) // 4 * 3 > MAX_FILE_BYTES:
        raise errors.ApiError(413, f"{param}.file_data: the file is larger than this server's {MAX_FILE_BYTES // (1024 * 1024)} MiB limit for one file", param=f"{param}.file_data", code="file_too_large")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise errors.bad_request(f"{param}.file_data: not valid base64 ({exc}); was it cut short?", param=f"{param}.file_data", code="invalid_base64") from None
    if not data:
        raise errors.bad_request(f"{param}.file_data: the file is empty", param=f"{param}.file_data")
    return name, mime, data
