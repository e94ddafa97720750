"""Error codes and the error that travels as a JSON-RPC error object."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any


class ErrorCode(enum.IntEnum):
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    MODEL_NOT_FOUND = -32001
    INVALID_MODEL = -32002
    MODEL_TOO_LARGE = -32003
    NO_MODEL_LOADED = -32004
    BUSY = -32005
    UNKNOWN_REQUEST = -32006
    VERSION_MISMATCH = -32007
    CONTEXT_OVERFLOW = -32008
    NOT_INITIALIZED = -32009
    LISTEN_FAILED = -32010  # api.start: the address is taken or not this machine's
    OUTPUT_STALLED = -32011  # chat.generate: the client stopped reading stdout, so its reply was dropped (runtime/output_writer.py)
    # models from Hugging Face (runtime/hub)
    REPO_NOT_FOUND = -32040
    FILE_NOT_FOUND = -32041
    AUTH_REQUIRED = -32042  # gated or private, and no token: log in
    ACCESS_DENIED = -32043  # a token, but no access (gated terms not accepted)
    NETWORK_ERROR = -32044
    DISK_FULL = -32045
    CHECKSUM_MISMATCH = -32046
    DOWNLOAD_NOT_FOUND = -32047
    HUB_ERROR = -32048
    # Set by clients, never sent by the runtime: a call that got no answer, or a remote endpoint that failed.
    RUNTIME_DIED = -32090  # the runtime exited (or was shut down) before it answered
    REQUEST_TIMEOUT = -32091  # no answer within the call's timeout
    REMOTE_FAILED = -32095  # a remote OpenAI-compatible endpoint failed (app/remote)


class RpcError(Exception):
    """An error that travels as a JSON-RPC error object (code, message, data)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_dict(cls, error: Any) -> "RpcError":
        """The error a reply carries; a malformed one (a bare string, a code that is not an integer) still
        becomes an RpcError that says what was wrong, so the call that waits for it gets an answer and the
        reader that parsed it keeps reading."""
        if not isinstance(error, dict):
            return cls(ErrorCode.INVALID_REQUEST, f"malformed error reply: error must be an object, got {type(error).__name__} {str(error)[:200]!r}")
        code = error.get("code", ErrorCode.INTERNAL_ERROR)
        message = error.get("message", "")
        if isinstance(code, bool) or not isinstance(code, int):
            return cls(ErrorCode.INVALID_REQUEST, f"malformed error reply: error.code must be an integer, got {code!r:.100} (message: {str(message)[:200]!r})", error.get("data"))
        if not isinstance(message, str):
            message = f"malformed error reply: error.message must be a string, got {message!r:.200}"
        return cls(code, message, error.get("data"))

    def __repr__(self) -> str:
        return f"RpcError({self.code}, {self.message!r})"


@dataclass(frozen=True)
class ContextOverflow:
    """CONTEXT_OVERFLOW's data: a prompt of prompt_tokens that no trimming fits into a context of n_ctx.
    `n_ctx_train`: the context the model was trained for (0: not known), beyond which a larger context does not help."""

    prompt_tokens: int
    n_ctx: int
    n_ctx_train: int = 0

    def error(self, message: str) -> RpcError:
        return RpcError(ErrorCode.CONTEXT_OVERFLOW, message, asdict(self))

    @classmethod
    def of(cls, error: RpcError) -> ContextOverflow | None:
        """The data of a CONTEXT_OVERFLOW error; None for any other error, or one whose data is not this."""
        data = error.data
        if error.code != ErrorCode.CONTEXT_OVERFLOW or not isinstance(data, dict):
            return None
        try:
            return cls(int(data["prompt_tokens"]), int(data["n_ctx"]), int(data.get("n_ctx_train", 0)))
        except (KeyError, TypeError, ValueError):
            return None
