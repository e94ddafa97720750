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
