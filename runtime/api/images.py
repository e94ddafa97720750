"""`image_url` content parts: a picture as a data URL (always) or an http(s) URL (only behind a flag).

Every refusal is a 400 that names the part (`messages[1].content[0].image_url.url`) and says what
is wrong: a URL that is not a data URL, base64 that is cut short or not base64, a MIME type the
bytes do not match, a picture over the size limit, a format the runtime cannot read, a remote URL
while remote URLs are off. A picture that passes goes into the runtime's recent pictures
(runtime/vision/recent.py) and the message carries it as an Attachment, by its sha256, as the
window's messages carry theirs.

Remote URLs are off by default: fetching one makes this server reach whatever address a caller
names (other machines on its network included), which is not a local server's business unless its
owner says so (`lokal serve --allow-remote-images`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import re

import aiohttp

from runtime.api.errors import ApiError, bad_request
from runtime.protocol import Attachment
from runtime.vision.image_bytes import MAX_IMAGE_BYTES, ImageError, inspect
from runtime.vision.recent import RECENT

DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?P<params>(?:;[\w.+-]+=[\w.+-]+)*)(?P<base64>;base64)?,", re.ASCII)
FETCH_TIMEOUT_S = 20
OFF_LOOP_BYTES = 256 * 1024  # base64 larger than this is decoded on a worker thread, not on the loop that streams replies


async def attachment(url: str, param: str, allow_remote: bool) -> Attachment:
    """The picture an image_url part names, stored by its sha256; ApiError 400 naming `param` when it cannot be used."""
    if url.startswith("data:"):
        mime, data = await _from_data_url(url, param)
    elif url.startswith(("http://", "https://")):
        if not allow_remote:
            raise bad_request(
                f"{param}: this server does not fetch remote images (off by default; its owner can turn it on with "
                "`lokal serve --allow-remote-images`): send the image as a data URL (data:image/png;base64,...)",
                param=param,
                code="remote_images_off",
            )
        mime, data = await _fetch(url, param)
    else:
        raise bad_request(f"{param}: must be a data URL (data:image/png;base64,...) or an http(s) URL, not {url[:40]!r}", param=param)
    try:
        info = await asyncio.to_thread(inspect, data, mime) if len(data) > OFF_LOOP_BYTES else inspect(data, mime)
    except ImageError as exc:
        raise bad_request(f"{param}: {exc}", param=param, code="invalid_image") from None
    return Attachment("image", RECENT.put(data), "", info.mime)


async def _from_data_url(url: str, param: str) -> tuple[str, bytes]:
    head = DATA_URL.match(url)
    if head is None:
        raise bad_request(f"{param}: not a valid data URL (expected data:<mime type>;base64,<data>)", param=param)
    mime = head.group("mime") or ""
    if not mime.lower().startswith("image/"):
        raise bad_request(f"{param}: the data URL's MIME type is {mime or 'missing'!r}, not an image type (image/png, image/jpeg, ...)", param=param, code="invalid_image")
    if not head.group("base64"):
        raise bad_request(f"{param}: the image data must be base64 (data:{mime};base64,...)", param=param)
    encoded = url[head.end() :]
    if len(encoded) > (MAX_IMAGE_BYTES + 2) // 3 * 4 + 4:
        raise bad_request(f"{param}: the image is over the limit of {MAX_IMAGE_BYTES} bytes", param=param, code="image_too_large")
    try:
        data = await asyncio.to_thread(_b64decode, encoded) if len(encoded) > OFF_LOOP_BYTES else _b64decode(encoded)
    except (binascii.Error, ValueError) as exc:
        raise bad_request(f"{param}: the base64 data is truncated or not base64 ({exc})", param=param, code="invalid_image") from None
    return mime, data


def _b64decode(encoded: str) -> bytes:
    return base64.b64decode(encoded, validate=True)


async def _fetch(url: str, param: str) -> tuple[str, bytes]:
    timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT_S)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url, allow_redirects=True, max_redirects=3) as response:
            if response.status != 200:
                raise bad_request(f"{param}: fetching the image failed: HTTP {response.status}", param=param, code="image_fetch_failed")
            data = bytearray()
            async for block in response.content.iter_chunked(64 * 1024):
                data += block
                if len(data) > MAX_IMAGE_BYTES:
                    raise bad_request(f"{param}: the image is over the limit of {MAX_IMAGE_BYTES} bytes", param=param, code="image_too_large")
            mime = response.headers.get("Content-Type", "").split(";", 1)[0].strip()
    except ApiError:
        raise
    except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as exc:
        raise bad_request(f"{param}: fetching the image failed: {type(exc).__name__}: {exc}", param=param, code="image_fetch_failed") from None
    # A server's Content-Type for a picture is often generic: only an image type is held against the bytes.
    return (mime if mime.startswith("image/") else ""), bytes(data)
