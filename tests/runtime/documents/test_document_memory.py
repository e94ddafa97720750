"""What the runtime keeps in memory of the documents it has been handed: bounded, however many it is given."""

from __future__ import annotations

import gc
import threading

from runtime.documents import library as library_module
from runtime.documents.library import DocumentLibrary


def put(library: DocumentLibrary, i: int, chars: int) -> str:
    text = f"Document {i}. " + "x" * chars
    return library.store.put(text.encode(), f"doc{i}.txt", "text/plain", "document").id


def test_extracted_texts_kept_in_memory_are_bounded_and_the_rest_read_again_from_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(library_module, "TEXTS_KEPT_CHARS", 25_000)
    library = DocumentLibrary(tmp_path, lambda: None)
    docs = [put(library, i, 10_000) for i in range(6)]
    for i, doc in enumerate(docs):
        assert library.text(doc, f"doc{i}.txt", "text/plain").text.startswith(f"Document {i}.")
    kept = library._texts
    assert sum(len(t.text) for t in kept.values()) <= 25_000
    assert list(kept) == docs[-2:], "the last used are the ones kept"
    # One read again comes from its .text.json, whole, and is then among the kept.
    assert library.text(docs[0]).text == "Document 0. " + "x" * 10_000
    assert list(kept) == [docs[-1], docs[0]]


def test_one_document_larger_than_the_bound_is_still_kept_while_it_is_the_last_used(tmp_path, monkeypatch):
    monkeypatch.setattr(library_module, "TEXTS_KEPT_CHARS", 1_000)
    library = DocumentLibrary(tmp_path, lambda: None)
    doc = put(library, 0, 5_000)
    assert library.text(doc, "doc0.txt", "text/plain") is library.text(doc)


def test_a_documents_indexing_lock_is_forgotten_once_no_request_holds_it(tmp_path):
    library = DocumentLibrary(tmp_path, lambda: None)
    held = library._indexing("a")
    assert library._indexing("a") is held, "two requests for one document share its lock"
    waiting = threading.Event()

    def second() -> None:
        indexing = library._indexing("a")
        waiting.set()
        with indexing.lock:
            pass

    with held.lock:
        thread = threading.Thread(target=second)
        thread.start()
        assert waiting.wait(5)
    thread.join(5)
    for i in range(1000):
        with library._indexing(f"doc{i}").lock:
            pass
    del held
    gc.collect()
    assert len(library._indexing_locks) == 0
