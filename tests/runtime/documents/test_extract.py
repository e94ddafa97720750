"""Text extraction from real files of each format the runtime takes, and clear refusals of what it does not."""

from __future__ import annotations

import pytest

from document_files import docx_bytes, pdf_bytes
from runtime.documents.extract import ExtractionError, extract


def test_a_pdf_is_read_page_by_page_and_each_line_knows_its_page():
    data = pdf_bytes([["First page says hello.", "Second line."], ["The vault code is 4817."], ["Last page."]])
    extracted = extract(data, "report.pdf")
    assert extracted.pages == 3
    assert "First page says hello." in extracted.text and "The vault code is 4817." in extracted.text
    line = next(i for i, text in enumerate(extracted.text.split("\n"), 1) if "4817" in text)
    assert extracted.page_of_line(line) == 2
    assert extracted.page_of_line(1) == 1


def test_a_docx_gives_its_paragraphs_and_tables_in_order():
    data = docx_bytes(["Minutes of the meeting.", "Budget approved."], table=[["item", "cost"], ["chairs", "120"]])
    text = extract(data, "minutes.docx").text
    assert text.index("Minutes of the meeting.") < text.index("Budget approved.") < text.index("chairs\t120")


def test_html_loses_its_markup_scripts_and_styles():
    html = b"<html><head><style>p{color:red}</style><script>alert('x')</script></head><body><h1>Title</h1><p>Body &amp; soul.</p></body></html>"
    text = extract(html, "page.html").text
    assert text == "Title\nBody & soul."


def test_text_code_and_csv_keep_their_own_line_numbers():
    source = b"def f():\n    return 1\n\n\n\ndef g():\n    return 2\r\n"
    assert extract(source, "m.py").text.split("\n")[5] == "def g():"
    assert extract(b"a,b\r\n1,2\r\n", "t.csv").text == "a,b\n1,2\n"
    latin = "Le café est très bon, la crème brûlée aussi. Où est la gare ? Déjà vu, à côté de l'hôtel.\n" * 3
    assert extract(latin.encode("utf-16"), "notes.txt").text == latin  # not UTF-8: charset-normalizer finds it


@pytest.mark.parametrize(
    "data, name, says",
    [
        (b"%PDF-1.4\nthis is not really a pdf", "broken.pdf", "not a readable PDF"),
        (pdf_bytes([[]]), "scan.pdf", "no text layer"),
        (b"PK\x03\x04garbage", "broken.docx", "not a readable DOCX"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00", "a.out", "not a document Lokal can read"),
    ],
)
def test_what_cannot_be_read_is_refused_with_the_reason(data, name, says):
    with pytest.raises(ExtractionError, match=says):
        extract(data, name)
