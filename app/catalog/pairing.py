"""A model downloaded with its draft model becomes a pair: the draft is stored as the target's draft model in
its load settings (runtime/models/load_settings.py, the one writer), so the window, `lokal chat` and `lokal serve`
load the two together, and Model ▸ Draft model shows the choice.

Only the draft setting changes; the target's other settings stay as the user set them.
"""

from __future__ import annotations

import dataclasses
import os

from runtime.hub.quants import is_projector
from runtime.models import load_settings


def model_file(paths: list[str]) -> str:
    """The file a download is loaded from: its GGUF, or a split model's first part (…-00001-of-000NN.gguf); a vision
    model's projector (mmproj-….gguf), downloaded with it, is not the model."""
    ggufs = sorted(p for p in paths if p.lower().endswith(".gguf") and not is_projector(os.path.basename(p)))
    if not ggufs:
        raise ValueError(f"no GGUF file among {', '.join(os.path.basename(p) for p in paths) or 'the downloaded files'}")
    return ggufs[0]


def pair(target_paths: list[str], draft_paths: list[str]) -> tuple[str, str]:
    """Store the draft download as the target download's draft model; (target file, draft file).
    ValueError (a SettingsError naming the field, or no GGUF file) when it cannot."""
    target, draft = model_file(target_paths), model_file(draft_paths)
    settings = load_settings.read_for(target)
    load_settings.write(target, dataclasses.replace(settings, draft=draft))
    return target, draft
