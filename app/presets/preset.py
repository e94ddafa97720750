"""A preset, what it may hold, and its JSON form: Qt-free, so `lokal serve --preset` and the window share it.

A preset is a system prompt and sampling settings (each optional: one it leaves out keeps the new chat's
default, the loaded model's recommendation included), and optionally a model file with its load settings
(runtime/models/load_settings.py's LoadSettings, checked by its own `check`).

Every value is checked where it comes in (the store, an imported file, the window) and a bad one is a
PresetError that names it: `presets[2].sampling.temperature: 3.5 is not between 0 and 2`. The JSON file
(import and export):

    {"lokal_presets": 1, "presets": [{"name": "Translator", "system_prompt": "…",
      "sampling": {"temperature": 0.3}, "model": "/models/x.gguf", "load_settings": {"n_ctx": 8192}}]}
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any

from runtime.models import load_settings
from runtime.models.load_settings import LoadSettings

FORMAT_KEY = "lokal_presets"
FORMAT_VERSION = 1
MAX_FILE_BYTES = 1 << 20  # a file of presets is a few KiB; anything far larger is not one
MAX_PRESETS = 1000
MAX_NAME = 80
MAX_PROMPT = 100_000  # characters: a long system prompt is fine, a book is a mistake


class PresetError(ValueError):
    """A preset, or a file of them, that cannot be used; the message names the field."""


# The sampling a preset may set: (lowest, highest, whether the lowest is allowed), as the API takes them.
_NUMBERS: dict[str, tuple[float, float, bool]] = {
    "temperature": (0.0, 2.0, True),
    "top_p": (0.0, 1.0, False),
    "min_p": (0.0, 1.0, True),
    "repeat_penalty": (0.0, 10.0, False),
}


@dataclass(frozen=True)
class Sampling:
    """Sampling settings; None leaves the new chat's own value (Lokal's default, or the model's recommendation)."""

    temperature: float | None = None
    top_p: float | None = None
    min_p: float | None = None
    repeat_penalty: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def given(self) -> dict[str, float | int]:
        """The values it sets, by ConversationSettings' (and ChatGenerateParams') field names."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Preset:
    name: str
    system_prompt: str = ""
    sampling: Sampling = field(default_factory=Sampling)
    model: str = ""  # a GGUF file's path; "" for none (the chat keeps the model in use)
    load_settings: LoadSettings | None = None  # with `model`: how to load it
    builtin: str = ""  # a built-in preset's key (app/presets/builtin.py); "" for the user's own

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "system_prompt": self.system_prompt, "sampling": self.sampling.given()}
        if self.model:
            out["model"] = self.model
        if self.load_settings is not None:
            out["load_settings"] = dataclasses.asdict(self.load_settings)
        return out


def _number(value: object, where: str, low: float, high: float, low_ok: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PresetError(f"{where}: {value!r} is not a number")
    if not (low <= value <= high) or (value == low and not low_ok):
        wanted = f"between {low:g} and {high:g}" if low_ok else f"above {low:g} and at most {high:g}"
        raise PresetError(f"{where}: {value!r} is not {wanted}")
    return float(value)


def _whole(value: object, where: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise PresetError(f"{where}: {value!r} is not a whole number of at least {low}")
    return value


def sampling_from(data: object, where: str = "sampling") -> Sampling:
    if not isinstance(data, dict):
        raise PresetError(f"{where}: not an object of sampling settings")
    known = {f.name for f in dataclasses.fields(Sampling)}
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise PresetError(f"{where}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    values: dict[str, Any] = {}
    for name, value in data.items():
        if value is None:
            continue
        if name in _NUMBERS:
            values[name] = _number(value, f"{where}.{name}", *_NUMBERS[name])
        elif name == "max_tokens":
            values[name] = _whole(value, f"{where}.{name}", 1)
        else:  # seed
            values[name] = _whole(value, f"{where}.{name}", 0)
    return Sampling(**values)


def load_settings_from(data: object, where: str = "load_settings") -> LoadSettings:
    if not isinstance(data, dict):
        raise PresetError(f"{where}: not an object of load settings")
    known = {f.name for f in dataclasses.fields(LoadSettings)}
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise PresetError(f"{where}: unknown setting(s) {', '.join(unknown)}")
    try:
        return load_settings.check(LoadSettings(**data), where)
    except load_settings.SettingsError as exc:
        raise PresetError(str(exc)) from None


def check_name(name: object, where: str = "name") -> str:
    if not isinstance(name, str) or not name.strip():
        raise PresetError(f"{where}: a preset needs a name")
    name = " ".join(name.split())
    if len(name) > MAX_NAME:
        raise PresetError(f"{where}: {name[:20]!r}… is longer than {MAX_NAME} characters")
    return name


def preset_from(data: object, where: str = "preset") -> Preset:
    """A preset from its JSON form; PresetError names the first field that cannot be used."""
    if not isinstance(data, dict):
        raise PresetError(f"{where}: not an object")
    known = {"name", "system_prompt", "sampling", "model", "load_settings"}
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise PresetError(f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    name = check_name(data.get("name"), f"{where}.name")
    prompt = data.get("system_prompt", "")
    if not isinstance(prompt, str):
        raise PresetError(f"{where}.system_prompt: not text")
    if len(prompt) > MAX_PROMPT:
        raise PresetError(f"{where}.system_prompt: longer than {MAX_PROMPT} characters")
    model = data.get("model", "") or ""
    if not isinstance(model, str):
        raise PresetError(f"{where}.model: not a file's path")
    raw_load = data.get("load_settings")
    loads = load_settings_from(raw_load, f"{where}.load_settings") if raw_load is not None else None
    if loads is not None and not model:
        raise PresetError(f"{where}.load_settings: load settings need the model they are for (\"model\")")
    return Preset(name, prompt, sampling_from(data.get("sampling", {}), f"{where}.sampling"), model, loads)


def to_file_text(presets: list[Preset]) -> str:
    return json.dumps({FORMAT_KEY: FORMAT_VERSION, "presets": [p.to_json() for p in presets]}, indent=2, ensure_ascii=False) + "\n"


def from_file_bytes(raw: bytes) -> list[Preset]:
    """The presets of an exported file, all checked before any is used; PresetError says what is wrong with it."""
    if len(raw) > MAX_FILE_BYTES:
        raise PresetError(f"the file is {len(raw) // 1024} KiB: a file of presets is at most {MAX_FILE_BYTES // 1024} KiB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PresetError(f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise PresetError(f"the file is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise PresetError("the file is not a file of presets: it nests too deeply") from None
    if not isinstance(data, dict) or FORMAT_KEY not in data:
        raise PresetError(f"the file is not a file of Lokal presets: it has no \"{FORMAT_KEY}\" field")
    if data[FORMAT_KEY] != FORMAT_VERSION:
        raise PresetError(f"{FORMAT_KEY}: version {data[FORMAT_KEY]!r} is not one this Lokal reads ({FORMAT_VERSION})")
    items = data.get("presets")
    if not isinstance(items, list):
        raise PresetError("presets: not a list of presets")
    if len(items) > MAX_PRESETS:
        raise PresetError(f"presets: {len(items)} presets, more than the {MAX_PRESETS} a file may hold")
    presets = [preset_from(item, f"presets[{i}]") for i, item in enumerate(items)]
    seen: dict[str, int] = {}
    for i, preset in enumerate(presets):
        key = preset.name.casefold()
        if key in seen:
            raise PresetError(f"presets[{i}].name: {preset.name!r} is the name of presets[{seen[key]}] too")
        seen[key] = i
    return presets
