"""Framing: one JSON-RPC 2.0 object per line, parsed into a Request, Notification or Response."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Union

from runtime.protocol.codec import _fields
from runtime.protocol.errors import ErrorCode, RpcError

RequestId = Union[int, str]


@dataclass
class Request:
    id: Optional[RequestId]  # null is an id JSON-RPC allows (and answers with null)
    method: str
    params: Any


@dataclass
class Notification:
    method: str
    params: Any


@dataclass
class Response:
    id: Optional[RequestId]
    result: Any = None
    error: Optional[RpcError] = None


Incoming = Union[Request, Notification, Response]


def dump_line(message: dict[str, Any]) -> bytes:
    """One line of JSON; dataclasses in it are written as their fields (_fields)."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=_fields) + "\n").encode("utf-8")


def request_line(request_id: RequestId, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return dump_line(message)


def notification_line(method: str, params: Any) -> bytes:
    return dump_line({"jsonrpc": "2.0", "method": method, "params": params})


def result_line(request_id: Optional[RequestId], result: Any) -> bytes:
    return dump_line({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_line(request_id: Optional[RequestId], error: RpcError) -> bytes:
    return dump_line({"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()})


def parse_line(line: Union[bytes, str]) -> Incoming:
    """Parse one line into a Request, Notification or Response; RpcError if it is none of them."""
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RpcError(ErrorCode.PARSE_ERROR, f"not valid JSON: {exc}") from None
    except RecursionError:  # the JSON decoder's own bound on nesting (about a thousand levels)
        raise RpcError(ErrorCode.PARSE_ERROR, "not valid JSON: arrays or objects nest too deeply") from None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(ErrorCode.INVALID_REQUEST, "expected a JSON-RPC 2.0 object")
    request_id = message.get("id")
    if request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, (int, str))):
        raise RpcError(ErrorCode.INVALID_REQUEST, "id must be an integer or a string")
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str):
            raise RpcError(ErrorCode.INVALID_REQUEST, "method must be a string", {"id": request_id})
        params = message.get("params")
        if "id" in message:
            return Request(request_id, method, params)
        return Notification(method, params)
    if "result" in message or "error" in message:
        error = message.get("error")
        return Response(request_id, message.get("result"), RpcError.from_dict(error) if error is not None else None)
    raise RpcError(ErrorCode.INVALID_REQUEST, "neither a request nor a response")
