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
        (AttachmentAddParams(name="a.txt"), "exactly one of path and data_base64"),
        (AttachmentAddParams(name="a.txt", path="/x", data_base64="eA=="), "exactly one of path and data_base64"),
        (AttachmentAddParams(name="a.txt", data_base64="eA="), "params.data_base64: not valid base64"),
        (AttachmentAddParams(path="/no/such/file.pdf"), "params.path: cannot read /no/such/file.pdf"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_the_runtime_goes_on(runtime, params, named):
    with pytest.raises(RpcError) as caught:
        runtime.request(methods.ATTACHMENT_ADD, params)
    assert caught.value.code == ErrorCode.INVALID_PARAMS and named in caught.value.message
    assert runtime.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="ok.txt", data_base64="b2s=")).bytes == 2
