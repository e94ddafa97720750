"""A document's text, extracted once from its bytes: PDF by page, DOCX, HTML, CSV, and text (Markdown, source code).

Libraries, not hand-written parsers (pyproject.toml says why each):
- PDF: pypdfium2 (PDFium, Chromium's PDF engine). It reads the real-world files pure-Python parsers
  stumble on (broken xref tables, odd encodings) and is several times faster; pages stay apart, so a
  citation can say "page 3".
- DOCX: python-docx, paragraphs and tables in document order.
- HTML: BeautifulSoup over the standard library's parser, scripts and styles dropped.
- Text of any other kind (Markdown, code, CSV, logs): UTF-8, else the encoding charset-normalizer finds.
  CSV stays as it is: its rows are lines, which a citation can point at.

A file that is none of these (an executable, an archive) is refused with a message that names the
kinds taken, rather than a prompt full of bytes.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePath

PDF_MAGIC = b"%PDF-"
ZIP_MAGIC = b"PK\x03\x04"
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
FORMATS = "text, Markdown, source code, CSV, HTML, PDF and DOCX"


class ExtractionError(ValueError):
    """The file cannot be read as a document; the message says why, for the person who attached it."""


@dataclass
class Extracted:
    """The text, and for a paged format the line each page starts on (1-based) so a chunk's lines give its page."""

    text: str
    page_starts: list[int] = field(default_factory=list)  # [] : not paged

    @property
    def pages(self) -> int:
        return len(self.page_starts)

    def page_of_line(self, line: int) -> int:
        """The 1-based page that line `line` (1-based) is on (0: not paged)."""
        page = 0
        for number, start in enumerate(self.page_starts, 1):
            if start > line:
                break
            page = number
        return page


def extract(data: bytes, name: str = "", mime: str = "") -> Extracted:
    suffix = PurePath(name).suffix.lower()
    if data.startswith(PDF_MAGIC) or mime == "application/pdf" or suffix == ".pdf":
        return _pdf(data)
    if suffix == ".docx" or mime == DOCX_MIME or (data.startswith(ZIP_MAGIC) and _is_docx(data)):
        return _docx(data)
    text = _decode_text(data, name)
    if suffix in HTML_SUFFIXES or mime in ("text/html", "application/xhtml+xml"):
        return Extracted(_html_text(text))
    return Extracted(_normalise(text, collapse_blank_lines=False))  # its own line numbers, for citations


def _pdf(data: bytes) -> Extracted:
    import pypdfium2

    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        raise ExtractionError(f"not a readable PDF ({exc})") from None
    try:
        pages: list[str] = []
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            pages.append(_normalise(textpage.get_text_bounded()).strip("\n"))
            textpage.close()
            page.close()
    finally:
        document.close()
    page_starts: list[int] = []
    line = 1
    for text in pages:
        page_starts.append(line)
        line += text.count("\n") + 2  # the page's lines and the blank line between pages
    text = "\n\n".join(pages)
    if not text.strip():
        raise ExtractionError("the PDF has no text layer (a scanned document?): nothing to read")
    return Extracted(text, page_starts)


def _is_docx(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except zipfile.BadZipFile:
        return False


def _docx(data: bytes) -> Extracted:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises zipfile's, lxml's or its own errors for a broken file
        raise ExtractionError(f"not a readable DOCX file ({type(exc).__name__}: {exc})") from None
    blocks: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            blocks.append(block.text)
        elif isinstance(block, Table):
            rows = ["\t".join(cell.text for cell in row.cells) for row in block.rows]
            blocks.append("\n".join(rows) + "\n")
    return Extracted(_normalise("\n".join(blocks)))


def _html_text(html: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    text = soup.get_text("\n")
    lines = [line.strip() for line in text.splitlines()]
    return _normalise("\n".join(lines))


def _decode_text(data: bytes, name: str) -> str:
    # NUL bytes: a binary file (valid UTF-8 or not), unless UTF-16/32 says so with its byte order mark.
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ExtractionError(f"{name or 'the file'} is not a document Lokal can read ({FORMATS} are)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise ExtractionError(f"{name or 'the file'} is not a document Lokal can read ({FORMATS} are)")
    return str(best)


def _normalise(text: str, collapse_blank_lines: bool = True) -> str:
    """One kind of line end, no trailing spaces, at most one blank line in a row: the text the model and citations see."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    if not collapse_blank_lines:
        return "\n".join(lines)
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")
