"""Checks on a picture's bytes before llama.cpp's decoder sees them: a known format, sane dimensions, a size limit.

llama.cpp's multimodal helper decodes pictures with stb_image (PNG, JPEG, GIF, BMP) and hands whatever
stb_image cannot read to its audio and video paths, which start ffmpeg. Only the formats stb_image
reads get that far: the format is told from the bytes (never from a name or a declared MIME type,
which is checked against them), and the dimensions are read from the header, so a small file that
would decode to gigabytes of pixels is refused before it is decoded.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAX_IMAGE_BYTES = 16 * 1024 * 1024  # one picture's file; larger is refused (the API answers 400)
MAX_SIDE = 16384  # pixels on either side
MAX_PIXELS = 64_000_000  # what stb_image would decode into memory, at 3 bytes a pixel: under 200 MB

FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "bmp": "image/bmp"}
SUPPORTED = ", ".join(sorted(FORMATS.values()))


class ImageError(ValueError):
    """Bytes that are not a picture this runtime can read; the message says what is wrong."""


@dataclass(frozen=True)
class ImageInfo:
    format: str  # a key of FORMATS
    mime: str
    width: int
    height: int


def inspect(data: bytes, declared_mime: str = "") -> ImageInfo:
    """The picture's format and size from its header; ImageError saying why it cannot be used."""
    if not data:
        raise ImageError("the image is empty (0 bytes)")
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(f"the image is {len(data)} bytes, over the limit of {MAX_IMAGE_BYTES} bytes")
    fmt = _format(data)
    if fmt is None:
        raise ImageError(f"the data is not an image in a supported format ({SUPPORTED}){_named(data)}")
    mime = FORMATS[fmt]
    declared = declared_mime.lower().strip()
    if declared and declared not in (mime, "image/jpg" if fmt == "jpeg" else mime):
        raise ImageError(f"the image is declared as {declared_mime!r} but its bytes are {mime}")
    try:
        width, height = _SIZES[fmt](data)
    except (struct.error, IndexError, ValueError):
        raise ImageError(f"the {mime} image is truncated or broken: its header cannot be read") from None
    if width <= 0 or height <= 0:
        raise ImageError(f"the {mime} image has no pixels ({width}x{height})")
    if width > MAX_SIDE or height > MAX_SIDE or width * height > MAX_PIXELS:
        raise ImageError(f"the image is {width}x{height} pixels, over the limit of {MAX_SIDE} a side and {MAX_PIXELS} pixels in all")
    return ImageInfo(fmt, mime, width, height)


def _format(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data.startswith(b"BM"):
        return "bmp"
    return None


def _named(data: bytes) -> str:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ": it is image/webp, which this runtime cannot decode"
    if data[4:12] in (b"ftypheic", b"ftypavif", b"ftypmif1"):
        return ": it is HEIC/AVIF, which this runtime cannot decode"
    return ""


def _png_size(data: bytes) -> tuple[int, int]:
    if data[12:16] != b"IHDR":
        raise ValueError("no IHDR")
    return struct.unpack(">II", data[16:24])


def _gif_size(data: bytes) -> tuple[int, int]:
    return struct.unpack("<HH", data[6:10])


def _bmp_size(data: bytes) -> tuple[int, int]:
    width, height = struct.unpack("<ii", data[18:26])
    return width, abs(height)  # a negative height is a top-down bitmap


def _jpeg_size(data: bytes) -> tuple[int, int]:
    """From the first start-of-frame marker (SOF0..SOF15 but DHT, JPG and DAC), walking the segments."""
    i = 2
    while True:
        while data[i] != 0xFF:
            i += 1
        while data[i] == 0xFF:
            i += 1
        marker = data[i]
        i += 1
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            continue  # markers without a length
        if marker == 0xD9:
            raise ValueError("end of image before a frame header")
        (length,) = struct.unpack(">H", data[i : i + 2])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 3 : i + 7])
            return width, height
        i += length


_SIZES = {"png": _png_size, "gif": _gif_size, "bmp": _bmp_size, "jpeg": _jpeg_size}
