"""Typed (de)serialisation: JSON data to the message dataclasses and back, naming the bad field."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import types
import typing
from typing import Any, Literal, TypeVar, Union

from runtime.protocol.errors import ErrorCode, RpcError

T = TypeVar("T")

_hints_cache: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _hints_cache.get(cls)
    if hints is None:
        hints = _hints_cache[cls] = typing.get_type_hints(cls)
    return hints


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _decode_value(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode_value(option, value, path)
            except RpcError:
                pass
        raise _invalid(path, " or ".join(_type_name(o) for o in options), value)
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"{path}: expected one of {list(allowed)}, got {value!r}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise _invalid(path, "list", value)
        (item_type,) = typing.get_args(tp)
        return [_decode_value(item_type, item, f"{path}[{i}]") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise _invalid(path, "object", value)
        return value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return decode(tp, value, path)
    if tp is bool:
        if not isinstance(value, bool):
            raise _invalid(path, "bool", value)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _invalid(path, "int", value)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _invalid(path, "number", value)
        if not math.isfinite(value):  # Python's json reads NaN and Infinity, which JSON has not got
            raise RpcError(ErrorCode.INVALID_PARAMS, f"{path}: expected a finite number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise _invalid(path, "string", value)
        return value
    raise TypeError(f"protocol type {tp!r} at {path} is not supported")


def _invalid(path: str, expected: str, value: Any) -> RpcError:
    got = "null" if value is None else type(value).__name__
    return RpcError(ErrorCode.INVALID_PARAMS, f"{path}: expected {expected}, got {got}")


def decode(cls: type[T], data: Any, path: str = "params") -> T:
    """Build dataclass `cls` from JSON data, or raise INVALID_PARAMS naming the bad field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise _invalid(path, "object", data)
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]  # a dataclass: the message types are
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"{path}: unknown field(s) {', '.join(unknown)}")
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = _decode_value(hints[name], data[name], f"{path}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"{path}.{name}: required field is missing")
    return cls(**kwargs)


def encode(obj: Any) -> Any:
    """A dataclass as JSON data (what dataclasses.asdict gives, without its deep copy of every value)."""
    return json.loads(json.dumps(obj, default=_fields)) if dataclasses.is_dataclass(obj) and not isinstance(obj, type) else obj


@functools.cache
def _field_names(cls: Any) -> tuple[str, ...] | None:
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None


def _fields(obj: Any) -> dict[str, Any]:
    """json.dumps's `default`: a dataclass's fields. The lines are written straight from the dataclasses,
    so the C encoder does the work: the window encodes conversations of thousands of messages on its GUI
    thread, and dataclasses.asdict took 0.2 s for 3,400 of them."""
    names = _field_names(type(obj))  # type: ignore[arg-type]  # classes are hashable; mypy reads type[Any] as not
    if names is None:
        raise TypeError(f"{type(obj).__name__} is not JSON serializable")
    return {name: getattr(obj, name) for name in names}
