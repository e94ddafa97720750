"""A picture's bytes checked before llama.cpp's decoder sees them (runtime/vision/image_bytes.py)."""

from __future__ import annotations

import struct

import pytest

from runtime.vision import image_bytes
from runtime.vision.image_bytes import ImageError, inspect
from vision_files import png


def jpeg_header(width: int, height: int) -> bytes:
    """The start of a baseline JPEG: SOI, an APP0 segment, then the SOF0 frame header with the size."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def test_the_format_and_size_are_read_from_the_bytes():
    assert inspect(png(40, 30)) == image_bytes.ImageInfo("png", "image/png", 40, 30)
    assert inspect(jpeg_header(640, 480), "image/jpeg") == image_bytes.ImageInfo("jpeg", "image/jpeg", 640, 480)
    assert inspect(jpeg_header(8, 8), "image/jpg").format == "jpeg"
    assert inspect(b"GIF89a" + struct.pack("<HH", 7, 9) + bytes(8)).width == 7
    assert inspect(b"BM" + bytes(16) + struct.pack("<ii", 12, -5) + bytes(30)).height == 5  # a top-down bitmap


@pytest.mark.parametrize(
    "data, mime, says",
    [
        (b"", "", "empty"),
        (b"hello, this is text", "", "not an image in a supported format"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(16), "image/webp", "image/webp, which this runtime cannot decode"),
        (png()[:20], "", "truncated or broken"),
        (png(), "image/jpeg", "declared as 'image/jpeg' but its bytes are image/png"),
        (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", 20000, 20000) + bytes(9), "", "20000x20000 pixels, over the limit"),
        (jpeg_header(0, 10), "", "no pixels"),
    ],
)
def test_bytes_that_are_no_usable_picture_are_refused_saying_why(data, mime, says):
    with pytest.raises(ImageError) as refused:
        inspect(data, mime)
    assert says in str(refused.value)


def test_a_picture_over_the_size_limit_is_refused_before_it_is_read(monkeypatch):
    monkeypatch.setattr(image_bytes, "MAX_IMAGE_BYTES", 1000)
    with pytest.raises(ImageError, match="over the limit of 1000 bytes"):
        inspect(png(40, 30))
