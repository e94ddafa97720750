"""`lokal serve --preset NAME`: the preset found by name, its load settings as the load's flags, and its prompt and
sampling as the API's defaults (runtime.protocol.ApiDefaults). No Qt widgets: the command has no window."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from app.presets.builtin import builtin_presets, find_builtin
from app.presets.preset import Preset
from runtime.protocol import ApiDefaults


class PresetNotFound(LookupError):
    """No preset has the name: the message lists those that do exist."""


def find_preset(name: str, store_path: str | os.PathLike[str] | None = None) -> Preset:
    """The built-in preset (by key or English name) or the user's own called `name`, from the conversations
    database (LOKAL_DATA_DIR's, as the window's); PresetNotFound lists the names there are."""
    builtin = find_builtin(name)
    if builtin is not None:
        return builtin
    from app.presets.store import PresetStore
    from app.storage.store import Store, default_path

    path = Path(store_path) if store_path is not None else default_path()
    mine: list[Preset] = []
    if os.path.exists(path):
        Store(path).close()  # the schema up to date (the presets table), as the window would make it
        store = PresetStore(path)
        try:
            found = store.find(name)
            if found is not None:
                return found
            mine = store.user_presets()
        finally:
            store.close()
    known = [f"{p.builtin} ({p.name})" for p in builtin_presets(translate=False)] + [repr(p.name) for p in mine]
    raise PresetNotFound(f"--preset: no preset is called {name!r}; there are: {', '.join(known)}")


def load_flags(preset: Preset, model_path: str, flags: dict[str, Any]) -> dict[str, Any]:
    """The load's flags: those given on the command line, and the preset's load settings in the others' place
    when the model served is the preset's own (its settings are for that file)."""
    if preset.load_settings is None or os.path.realpath(model_path) != os.path.realpath(preset.model):
        return flags
    out = dict(flags)
    for name, value in dataclasses.asdict(preset.load_settings).items():
        if out.get(name) is None:
            out[name] = value
    return out


def api_defaults(preset: Preset | None) -> ApiDefaults:
    if preset is None:
        return ApiDefaults()
    given: dict[str, Any] = preset.sampling.given()  # Sampling's fields are ApiDefaults' by name
    return ApiDefaults(preset=preset.name, system_prompt=preset.system_prompt, **given)
