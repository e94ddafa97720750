"""Reading an import file: bounded in size and nesting, and typed access that names the bad field.

A hostile file must not hang the window or take its memory: a file above MAX_BYTES is refused before
it is read, JSON nested deeper than Python's parser allows is refused with a clear error (not a
RecursionError), and every value a reader uses is checked for its type where it is read, with its
path in the file ("[2].mapping.abc.message.content.parts[0]: expected text, got a number").
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, TypeVar

from app.importing.conversation import ImportRefused

# ChatGPT's conversations.json of a heavy user runs to a few hundred MB; parsed, a file takes several times its size in memory.
MAX_BYTES = 512 * 2**20
T = TypeVar("T")

_NAMES = {dict: "an object", list: "a list", str: "text", float: "a number", int: "a number", bool: "true or false", type(None): "null"}


def read_json(path: str | Path) -> Any:
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise ImportRefused(f"{Path(path).name} is {size / 2**20:,.0f} MB; Lokal imports files of up to {MAX_BYTES // 2**20} MB")
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ImportRefused(f"{Path(path).name} is not UTF-8 text (byte {exc.start})") from exc
    except RecursionError as exc:
        raise ImportRefused(f"{Path(path).name} nests its JSON too deeply to be a conversation export") from exc
    except json.JSONDecodeError as exc:
        raise ImportRefused(f"{Path(path).name} is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc


def kind(value: object) -> str:
    return _NAMES.get(type(value), type(value).__name__)


def get(obj: dict[str, Any], key: str, want: type[T] | tuple[type, ...], where: str, default: Any = ...) -> Any:
    """obj[key], which must be of type `want`; `default` if it is missing (or null) and a default is given."""
    value = obj.get(key)
    if value is None and default is not ...:
        return default
    return check(value, want, f"{where}.{key}")


def check(value: Any, want: type[T] | tuple[type, ...], where: str) -> Any:
    wants = want if isinstance(want, tuple) else (want,)
    if float in wants and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, wants) or (isinstance(value, bool) and bool not in wants):
        expected = " or ".join(dict.fromkeys(_NAMES.get(w, w.__name__) for w in wants))
        raise ImportRefused(f"{where}: expected {expected}, got {kind(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ImportRefused(f"{where}: expected a finite number, got {value}")
    return value


def not_negative(obj: dict[str, Any], key: str, want: type[T] | tuple[type, ...], where: str) -> Any:
    """obj[key], a number of type `want` that is 0 or more (a duration, a size, an index); 0 if it is missing."""
    value = get(obj, key, want, where, default=0)
    if value < 0:
        raise ImportRefused(f"{where}.{key}: expected 0 or more, got {value}")
    return value


def timestamp(obj: dict[str, Any], key: str, where: str, default: float, *, millis: bool = False) -> float:
    """A time in seconds since 1970 (`millis`: the file counts milliseconds); `default` when missing."""
    value = get(obj, key, float, where, default=None)
    if value is None:
        return default
    seconds = value / 1000 if millis else value
    if not 0 <= seconds < 2**34:
        raise ImportRefused(f"{where}.{key}: {value} is not a plausible time")
    return float(seconds)
