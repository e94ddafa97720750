"""attachment.add through the real runtime process: the bytes kept once under their sha256, bad input refused by name."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import pytest

from runtime.protocol import AttachmentAddParams, ErrorCode, RpcError, methods


def test_a_file_is_stored_under_its_sha256_once_whether_sent_as_bytes_or_by_path(runtime, tmp_path):
    data = b"# Notes\n\nThe meeting is on Tuesday.\n"
    digest = hashlib.sha256(data).hexdigest()
    by_bytes = runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="notes.md", data_base64=base64.b64encode(data).decode()))
    path = tmp_path / "notes.md"
    path.write_bytes(data)
    by_path = runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(path=str(path)))
    assert by_bytes.id == by_path.id == digest
    assert by_bytes.bytes == len(data) and by_path.name == "notes.md" and by_bytes.kind == "document"
    stored = Path(os.environ["LOKAL_DATA_DIR"]) / "attachments" / digest[:2] / digest
    assert stored.read_bytes() == data


@pytest.mark.parametrize(
    "params, named",
    [
        (AttachmentAddParams(name="a.txt"), "exactly one of path, data_base64 and id"),
        (AttachmentAddParams(name="a.txt", path="/x", data_base64="eA=="), "exactly one of path, data_base64 and id"),
        (AttachmentAddParams(name="a.txt", path="/x", id="0" * 64), "exactly one of path, data_base64 and id"),
        (AttachmentAddParams(name="a.txt", id="0" * 64), "params.id: no attachment '" + "0" * 64 + "' is stored here"),
        (AttachmentAddParams(name="a.txt", id="../../etc/passwd"), "params.id: no attachment '../../etc/passwd' is stored here"),
        (AttachmentAddParams(name="a.txt", data_base64="eA="), "params.data_base64: not valid base64"),
        (AttachmentAddParams(path="/no/such/file.pdf"), "params.path: cannot read /no/such/file.pdf"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_the_runtime_goes_on(runtime, params, named):
    with pytest.raises(RpcError) as caught:
        runtime.request(methods.ATTACHMENT_ADD, params)
    assert caught.value.code == ErrorCode.INVALID_PARAMS and named in caught.value.message
    assert runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="ok.txt", data_base64="b2s=")).bytes == 2


def test_a_stored_attachment_is_asked_for_again_by_id_as_the_loaded_model_takes_it(runtime, starter_model):
    """Added while no model is loaded, a document has no size in tokens; by its id, once one is, it has."""
    from runtime.protocol import ModelLoadParams

    data = ("The ferry to the island leaves from pier 4 at nine. " * 20).encode()
    first = runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="ferry.txt", data_base64=base64.b64encode(data).decode()))
    assert first.tokens == 0 and not first.fits_whole and "no model is loaded" in first.note and first.document_budget == 0
    runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=2048))
    again = runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(id=first.id))
    assert (again.id, again.name, again.kind, again.bytes) == (first.id, "ferry.txt", "document", len(data))
    assert 150 < again.tokens < 400 and again.fits_whole and again.note == ""
    assert again.document_budget == 1024  # half the context: what the window says a large document is measured against
    picture = runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="dot.png", mime="image/png", data_base64=base64.b64encode(b"\x89PNG....").decode()))
    assert runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(id=picture.id)).kind == "image"


def test_an_embedding_model_that_is_not_there_is_refused_by_path_and_none_stays_loaded(runtime, tmp_path):
    from runtime.protocol import EmbeddingLoadParams

    with pytest.raises(RpcError) as caught:
        runtime.request(methods.EMBEDDING_LOAD, EmbeddingLoadParams(str(tmp_path / "missing.gguf")))
    assert caught.value.code == ErrorCode.MODEL_NOT_FOUND and "missing.gguf" in caught.value.message
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_bytes(b"not a model at all")
    with pytest.raises(RpcError) as caught:
        runtime.request(methods.EMBEDDING_LOAD, EmbeddingLoadParams(str(not_gguf)))
    assert caught.value.code == ErrorCode.INVALID_MODEL and "notes.gguf" in caught.value.message
    assert runtime.request(methods.EMBEDDING_UNLOAD).unloaded is False


def test_a_pdf_and_a_docx_are_read_when_added_and_a_broken_one_is_refused(runtime):
    from document_files import docx_bytes, pdf_bytes

    pdf = pdf_bytes([["Page one."], ["Page two."], ["Page three."]])
    info = runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="three.pdf", data_base64=base64.b64encode(pdf).decode()))
    assert (info.kind, info.mime, info.pages) == ("document", "application/pdf", 3)
    assert info.tokens == 0 and "no model is loaded" in info.note  # counted for the model once one is loaded
    docx = docx_bytes(["One paragraph."])
    assert runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="one.docx", data_base64=base64.b64encode(docx).decode())).pages == 0
    with pytest.raises(RpcError) as caught:
        runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="cut.pdf", data_base64=base64.b64encode(pdf[:40]).decode()))
    assert caught.value.code == ErrorCode.INVALID_PARAMS and "cut.pdf" in caught.value.message and "PDF" in caught.value.message
