"""Errors as OpenAI's API writes them, so any OpenAI client shows the message and branches on the status.

Body: {"error": {"message", "type", "param", "code"}}. 4xx for what the caller can fix,
429/503 (with Retry-After) for what waiting fixes, 500 for our faults.

A 500's own text stays in the log: an internal error's message can hold file
paths and other details of this machine, which are not the caller's business.
The caller gets a generic message with an id, and the log line has the same id,
so a report can be matched to its details.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from runtime.protocol import ErrorCode, RpcError

log = logging.getLogger("lokal.api")


class ApiError(Exception):
    def __init__(self, status: int, message: str, type: str = "invalid_request_error", code: str | None = None, param: str | None = None, retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param=param, code=code)


def unauthorized() -> ApiError:
    return ApiError(401, "missing or incorrect API key: send it as 'Authorization: Bearer <key>' (the key is in the file `lokal serve` printed)", code="invalid_api_key")


def model_not_found(requested: str, available: list[str]) -> ApiError:
    return ApiError(404, f"the model {requested!r} does not exist here; this server has: {', '.join(available) or 'none'}", param="model", code="model_not_found")


def loading(model: str | None) -> ApiError:
    what = f"the model {model!r}" if model else "the model"
    return ApiError(503, f"{what} is still loading; try again shortly", type="server_error", code="model_loading", retry_after=1)


def no_model() -> ApiError:
    return ApiError(503, "no model is loaded: load one in Lokal (the window's Model menu, or `lokal serve --model PATH`)", type="server_error", code="model_unavailable", retry_after=5)


def stopping() -> ApiError:
    return ApiError(503, "the API is stopping", type="server_error", code="server_stopping")


def queue_full(limit: int) -> ApiError:
    return ApiError(429, f"too many requests: one reply is generated at a time and {limit} already wait; try again shortly", type="requests", code="rate_limit_exceeded", retry_after=1)


def misdirected(host: str | None) -> ApiError:
    shown = host if host is None or len(host) <= 100 else host[:97] + "..."
    return ApiError(421, f"Host: {shown!r} is not this server's name; it listens on loopback and answers only requests to localhost, 127.0.0.1 or [::1] on its port", param="Host", code="misdirected_request")


def from_runtime(exc: BaseException) -> ApiError:
    """What the caller should see for an error the runtime's engine reported."""
    if isinstance(exc, RpcError):
        if exc.code == ErrorCode.CONTEXT_OVERFLOW:
            return ApiError(400, exc.message, code="context_length_exceeded")
        if exc.code == ErrorCode.INVALID_PARAMS:
            return ApiError(400, exc.message)
        if exc.code in (ErrorCode.NO_MODEL_LOADED, ErrorCode.BUSY):
            return ApiError(503, exc.message, type="server_error", code="model_unavailable", retry_after=1)
        where = exc.data.get("traceback") if isinstance(exc.data, dict) else None
        return internal(exc.message + (f"\n{where}" if where else ""), code="runtime_error")
    return internal(f"{type(exc).__name__}: {exc}", exc)


def internal(detail: str, exc: BaseException | None = None, code: str = "internal_error") -> ApiError:
    """A 500 that tells the caller only an id; `detail` (and the traceback of `exc`) go to the log under it."""
    incident = secrets.token_hex(6)
    log.error("internal error %s: %s", incident, detail, exc_info=exc)
    return ApiError(500, f"internal error {incident}: the server could not answer this request; its log has the details under this id", type="server_error", code=code)
