"""The check every model file passes before anything uses it: it exists, is a file, and is a complete GGUF.

Pure Python (no llama_cpp), so the engine, the draft-model loader and the
list of user-added models share it, and it answers in protocol errors.
"""

from __future__ import annotations

import os

from runtime.gguf.reader import GGUFError, GGUFHeader, read_file_header
from runtime.protocol import ErrorCode, RpcError


def check_model_file(path: str) -> GGUFHeader:
    if not os.path.exists(path):
        raise RpcError(ErrorCode.MODEL_NOT_FOUND, f"model file not found: {path}", {"path": path})
    if not os.path.isfile(path):
        raise RpcError(ErrorCode.INVALID_MODEL, f"not a file: {path}", {"path": path})
    try:
        return read_file_header(path)
    except GGUFError as exc:
        raise RpcError(ErrorCode.INVALID_MODEL, f"{os.path.basename(path)} is not a usable GGUF model: {exc}", {"path": path}) from None
    except OSError as exc:
        raise RpcError(ErrorCode.INVALID_MODEL, f"cannot read {path}: {exc.strerror}", {"path": path}) from None
