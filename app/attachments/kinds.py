"""Which files can be attached, and why one cannot: decided before anything is sent to the runtime.

The runtime reads and extracts the file (runtime/documents); the window only refuses what it can tell
at once (a folder, a file it cannot open, a format no extractor reads, a size over the runtime's
limit), so the user hears why at the moment they attach, in words, and their message stays as it was.
Qt-free, so the rules are tested on their own.
"""

from __future__ import annotations

import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.formatting import MIB
from app.ui.language import Context

Kind = Literal["document", "image"]
Attachments = Context("Attachments")

# The runtime refuses more than this (runtime/documents/service.py MAX_ATTACHMENT_BYTES): said here before reading.
MAX_DOCUMENT_BYTES = 64 * MIB
MAX_IMAGE_BYTES = 20 * MIB  # a picture is kept whole in the conversation database for its full view

# The formats the runtime extracts (issue #31: text, Markdown, source code, CSV, HTML, PDF, DOCX).
DOCUMENT_SUFFIXES = frozenset({
    ".txt", ".text", ".md", ".markdown", ".rst", ".log", ".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml", ".toml",
    ".ini", ".cfg", ".xml", ".html", ".htm", ".pdf", ".docx",
    ".py", ".pyi", ".js", ".mjs", ".ts", ".tsx", ".jsx", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".java", ".kt",
    ".go", ".rs", ".rb", ".php", ".swift", ".scala", ".sh", ".bash", ".zsh", ".ps1", ".sql", ".r", ".lua", ".pl",
    ".css", ".scss", ".vue", ".svelte", ".tex", ".el", ".hs", ".ml", ".dart", ".zig", ".nim", ".m", ".mm",
})  # fmt: skip
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp"})
# Files without a suffix that are text by convention.
TEXT_NAMES = frozenset({"makefile", "dockerfile", "readme", "license", "changelog"})


@dataclass(frozen=True)
class Refusal:
    """Why a file cannot be attached, in words for the user (its name included)."""

    name: str
    reason: str

    @property
    def message(self) -> str:
        return Attachments.tr("{name} was not attached: {reason}").format(name=self.name, reason=self.reason)


def kind_of(name: str) -> Kind | None:
    """A document, a picture, or None (a format Lokal cannot read), from the file's name."""
    path = Path(name)
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return "image"
    if suffix in DOCUMENT_SUFFIXES or (not suffix and path.name.lower() in TEXT_NAMES):
        return "document"
    return None


def mime_of(name: str) -> str:
    return mimetypes.guess_type(name)[0] or ("text/plain" if kind_of(name) == "document" else "")


def supported_formats() -> str:
    return Attachments.tr("text, Markdown, source code, CSV, HTML, PDF, DOCX, and pictures (PNG, JPEG, WebP, GIF, BMP)")


def check_kind(name: str, vision: bool, model: str) -> tuple[Kind | None, Refusal | None]:
    """The file's kind, or why it cannot be attached (its format; a picture for a model that cannot see)."""
    kind = kind_of(name)
    if kind is None:
        suffix = Path(name).suffix
        if not suffix:
            return None, Refusal(name, Attachments.tr("it has no extension, so Lokal cannot tell its format. It reads {formats}.").format(formats=supported_formats()))
        return None, Refusal(name, Attachments.tr("Lokal cannot read {suffix} files. It reads {formats}.").format(suffix=suffix, formats=supported_formats()))
    if kind == "image" and not vision:
        return None, Refusal(name, no_vision_reason(model))
    return kind, None


def no_vision_reason(model: str) -> str:
    if not model:
        return Attachments.tr("no model is loaded. Pictures need a model that can see (a vision model with its projector).")
    return Attachments.tr("{model} cannot see pictures. Load a vision model (one with a projector, from Model ▸ Browse models) to attach pictures.").format(model=model)


def check_file(path: str | os.PathLike[str], vision: bool, model: str) -> tuple[Kind | None, Refusal | None]:
    """A local file's kind, or why it cannot be attached: checked without reading more than one byte."""
    path = Path(path)
    if path.is_dir():
        return None, Refusal(path.name, Attachments.tr("it is a folder; attach the files in it instead."))
    kind, refusal = check_kind(path.name, vision, model)
    if refusal is not None:
        return None, refusal
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            f.read(1)  # opening it proves it can be read (permissions, a file that vanished, an offline drive)
    except OSError as exc:
        return None, Refusal(path.name, Attachments.tr("it cannot be read ({error}).").format(error=exc.strerror or exc))
    refusal = check_size(path.name, kind, size)
    return (None, refusal) if refusal is not None else (kind, None)


def check_size(name: str, kind: Kind | None, size: int) -> Refusal | None:
    limit = MAX_IMAGE_BYTES if kind == "image" else MAX_DOCUMENT_BYTES
    if size > limit:
        # In MiB, as the limits are: a file just over 64 MiB must not read as "67 MB, the most is 67 MB".
        return Refusal(name, Attachments.tr("it is {size} MiB; the most Lokal takes is {limit} MiB.").format(size=f"{size / MIB:.1f}", limit=limit // MIB))
    if size == 0:
        return Refusal(name, Attachments.tr("the file is empty."))
    return None
