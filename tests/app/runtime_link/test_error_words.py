"""The runtime's errors a user can act on, said in the window's language from the error's code and data; the data
as the runtime's own constructors make it (runtime/hub/errors.py, runtime/engine/engine.py's check_fits), so a
change of its shape there fails here."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt

from app.catalog.table_model import DownloadsModel
from app.formatting import human_size
from app.runtime_link.error_words import error_text, said
from runtime.engine.engine import check_fits
from runtime.gguf.reader import read_file_header
from runtime.hub.errors import disk_full
from runtime.protocol import DownloadInfo, ErrorCode, ModelLoadParams, RpcError

GIB = 2**30
GATED = {"repo": "meta-llama/Llama-3.2-1B-Instruct-GGUF", "gated": True}


def too_large(starter_model, ram: int) -> RpcError:
    with pytest.raises(RpcError) as caught:
        check_fits(read_file_header(starter_model), ModelLoadParams(str(starter_model), n_ctx=4096), 512, [], ram)
    assert caught.value.code == ErrorCode.MODEL_TOO_LARGE
    return caught.value


def test_in_english_each_kind_says_what_to_do_with_the_figures_in_the_window_s_units(english, starter_model):
    error = too_large(starter_model, 50_000_000)
    assert said(error) == (f"The model needs about {human_size(error.data['needed_bytes'])} of memory with these settings, and 50.0 MB is "
                           "available: choose a smaller quantization or context.")
    full = disk_full("Qwen/Qwen3-8B-GGUF", needed=3 * GIB, free=GIB, floor=GIB // 2)
    assert said(full) == "Not enough disk space: 3.2 GB more is needed, and 1.1 GB is free. Lokal leaves 536.9 MB of it free for everything else."
    assert said(disk_full("Qwen/Qwen3-8B-GGUF")) == "The disk is full."
    assert error_text(ErrorCode.AUTH_REQUIRED, "…", GATED).startswith("meta-llama/Llama-3.2-1B-Instruct-GGUF is a gated repository: accept its terms")
    assert error_text(ErrorCode.AUTH_REQUIRED, "…", {"repo": "me/private"}) == "me/private needs a Hugging Face token: log in with `hf auth login` (or set HF_TOKEN)."
    assert error_text(ErrorCode.ACCESS_DENIED, "…", {"repo": "me/private"}) == "Your Hugging Face token has no access to me/private."
    assert error_text(ErrorCode.REPO_NOT_FOUND, "…", {"repo": "me/typo", "has_token": False}).endswith("if it is private, log in with `hf auth login` (or set HF_TOKEN).")
    assert error_text(ErrorCode.NETWORK_ERROR, "cannot reach Hugging Face (ConnectTimeout: …)", {"what": "x"}) == (
        "Hugging Face cannot be reached: check the network connection.")


@pytest.mark.parametrize(
    ("code", "message", "data"),
    [
        (ErrorCode.INVALID_MODEL, "notes.gguf is not a usable GGUF model: bad magic", {"path": "notes.gguf"}),  # names a file and llama.cpp's words
        (ErrorCode.MODEL_TOO_LARGE, "the model needs more", {"where": "ram"}),  # figures missing: the runtime's words
        (ErrorCode.DISK_FULL, "not enough disk space", {"needed_bytes": "3 GiB", "free_bytes": 1}),  # figures of the wrong kind
        (ErrorCode.AUTH_REQUIRED, "needs a token", None),  # no data at all
        (ErrorCode.REPO_NOT_FOUND, "repository not found: x", {"repo": "x"}),  # without whether a token was used
    ],
)
def test_what_it_cannot_word_is_said_in_the_runtime_s_own_words(english, code, message, data):
    assert error_text(code, message, data) == message


def test_in_indonesian_the_errors_and_a_failed_download_s_row_are_indonesian(indonesian, starter_model):
    error = too_large(starter_model, 50_000_000)
    assert said(error).startswith("Model ini butuh sekitar ") and "memory" not in said(error)
    assert said(disk_full("x", needed=3 * GIB, free=GIB)).startswith("Ruang disk tidak cukup")
    assert error_text(ErrorCode.NETWORK_ERROR, "cannot reach Hugging Face", {"what": "x"}) == "Hugging Face tidak dapat dihubungi: periksa koneksi jaringan."
    failed = DownloadInfo("d1", GATED["repo"], "main", "Q4_K_M", ["model.gguf"], "failed", 0, 10, error="… is a gated repository: log in …",
                          error_code=int(ErrorCode.AUTH_REQUIRED), error_data=GATED)
    rows = DownloadsModel()
    rows.set_rows([failed])
    tooltip = rows.data(rows.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert tooltip.startswith(f"{GATED['repo']} adalah repositori berpagar") and "log in" not in tooltip
    assert tooltip in rows.data(rows.index(0, rows.columnCount() - 1))
    older = dataclasses.replace(failed, error_data=None)  # a record from before protocol 1.12: its English words
    rows.set_rows([older])
    assert rows.data(rows.index(0, 0), Qt.ItemDataRole.ToolTipRole) == older.error
