"""The same file attached twice at once (two copies of a download, a double drop): both are read, neither fails.

Both requests extract the same stored text; one used to read the other's half-written copy of it and failed with an
internal JSONDecodeError (found by tests/app/ui/test_narrow_window.py, which attaches four files of the same text)."""

from __future__ import annotations

import threading

from runtime.documents.library import DocumentLibrary

TEXT = ("The harbour opens at six. " * 4000).encode()  # large enough that writing its text takes a while


def test_one_documents_text_read_by_many_requests_at_once_is_never_half_written(tmp_path):
    first = DocumentLibrary(tmp_path, lambda: None)
    doc = first.store.put(TEXT, "notes.txt", "text/plain", "document").id
    failures: list[BaseException] = []
    for _round in range(20):
        text_file = first.store.path(doc).with_name(doc + ".text.json")
        text_file.unlink(missing_ok=True)
        libraries = [DocumentLibrary(tmp_path, lambda: None) for _ in range(6)]  # each its own memory: all read the disk
        start = threading.Barrier(len(libraries))

        def read(library: DocumentLibrary) -> None:
            start.wait()
            try:
                assert library.text(doc, "notes.txt", "text/plain").text.startswith("The harbour")
            except BaseException as exc:  # noqa: BLE001  # kept, and failed on below
                failures.append(exc)

        threads = [threading.Thread(target=read, args=(library,)) for library in libraries]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert not failures, f"{len(failures)} reads failed, the first: {failures[0]!r}"


def test_one_document_attached_twice_at_once_is_embedded_once(tmp_path, starter_model):
    from runtime.documents.chunking import chunk_text
    from runtime.embeddings.model import EmbeddingModel

    library = DocumentLibrary(tmp_path, lambda: None)
    library.embedder = EmbeddingModel(str(starter_model), n_threads=1)
    text = "\n\n".join(f"Entry {i}: the tide table for day {i} was kept by the harbour master." for i in range(40)).encode()
    doc = library.store.put(text, "tides.md", "text/markdown", "document").id
    embedded: list[int] = []  # chunks, as each request's progress counts them
    start = threading.Barrier(2)

    def index() -> None:
        start.wait()
        library.ensure_indexed(doc, "tides.md", "text/markdown", lambda done, _total: embedded.append(done))

    try:
        threads = [threading.Thread(target=index) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        chunks = len(chunk_text(text.decode()))
        assert chunks >= 2 and embedded == list(range(1, chunks + 1)), "one request embedded every chunk, the other none"
    finally:
        library.embedder.close()
