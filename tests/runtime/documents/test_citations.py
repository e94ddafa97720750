"""A reply's citations: two retrieved chunks from the same page (or the same lines) of one document are one source
under the reply, while the prompt still carries both chunks."""

from __future__ import annotations

from runtime.documents.index import Hit
from runtime.documents.library import retrieved_turn


def hit(doc: str, chunk: int, text: str, page: int = 0, last_page: int = 0, lines: tuple[int, int] = (1, 1)) -> Hit:
    return Hit(doc, chunk, 0.5, text, lines[0], lines[1], page, last_page)


def test_chunks_from_the_same_page_are_cited_once_and_both_stay_in_the_prompt():
    chosen = [
        hit("pdf", 7, "The code is 4817.", page=3, last_page=3),
        hit("pdf", 2, "Ships sail north.", page=1, last_page=1),
        hit("pdf", 6, "The observatory is blue.", page=3, last_page=3),
        hit("other", 0, "Gulls circle.", page=3, last_page=3),  # the same page of another document: its own source
    ]
    turn, citations = retrieved_turn("What is the code?", chosen, {"pdf": "report.pdf", "other": "notes.pdf"})

    assert [(c.name, c.where) for c in citations] == [("report.pdf", "page 3"), ("report.pdf", "page 1"), ("notes.pdf", "page 3")]
    assert [(c.page, c.last_page) for c in citations] == [(3, 3), (1, 1), (3, 3)]  # the window says them in its language
    first = citations[0]
    assert first.chunk == 7  # the most relevant chunk's place in the list, and its index
    assert first.text == "The observatory is blue.\n\nThe code is 4817."  # both texts, in the document's order
    for text in ("The code is 4817.", "Ships sail north.", "The observatory is blue.", "Gulls circle."):
        assert turn.count(text) == 1  # every chunk goes into the prompt, each as its own excerpt
    assert turn.count('where="page 3"') == 3 and turn.endswith("What is the code?")


def test_chunks_of_the_same_lines_are_cited_once_and_other_lines_apart():
    chosen = [hit("src", 4, "def main():", lines=(40, 62)), hit("src", 5, "    run()", lines=(40, 62)), hit("src", 9, "x = 1", lines=(70, 70))]
    _, citations = retrieved_turn("", chosen, {"src": "main.py"})
    assert [(c.where, c.text) for c in citations] == [("lines 40–62", "def main():\n\n    run()"), ("line 70", "x = 1")]
    assert [(c.page, c.first_line, c.last_line) for c in citations] == [(0, 40, 62), (0, 70, 70)]
