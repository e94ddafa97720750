"""The model load of `lokal chat` and `lokal serve`: the model's stored load settings
(runtime/models/load_settings.py, the window's too), with the flags given on the command line in
place of a stored value, for this run only."""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any, Optional

from runtime.models import drafts, load_settings
from runtime.models.load_settings import LoadSettings
from runtime.protocol import ModelLoadParams


def local_candidates() -> list[tuple[str, int]]:
    """The GGUF files on this machine (as `lokal models` lists them), as draft candidates."""
    from runtime.models import local

    return [(m.path, m.size) for m in local.list_models() if not m.problem]


def add_flash_attn_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--flash-attn", choices=list(load_settings.FLASH_ATTN_WORDS), default=None,
                        help="flash attention: auto (llama.cpp's choice: on), on, or off (faster on a CPU; a quantized V cache needs it on); "
                             "default: the model's load settings, else auto")


def stored_load(path: str, draft: Optional[str] = None, gpu_offload: Optional[str] = None, flash_attn: str | bool | None = None,
                **flags: Any) -> tuple[ModelLoadParams, LoadSettings]:
    """The load request for `path` and the settings it came from; a flag left None keeps the stored value.
    `flash_attn`: --flash-attn's word (auto, on, off), or a preset's stored True or False (app/presets/serving.py).
    SettingsError names a stored or given value that cannot be used."""
    if not os.path.isfile(path):
        raise load_settings.SettingsError(f"model file not found: {path}")
    settings = load_settings.read_for(path)
    if gpu_offload is not None:  # app/cli/offload.py: auto, all, off or N
        flags["gpu_offload"] = gpu_offload
    chosen = settings
    if flash_attn is not None:
        # In the settings rather than an override: an override of None means "not given", and auto is None.
        chosen = dataclasses.replace(settings, flash_attn=load_settings.FLASH_ATTN_WORDS[flash_attn] if isinstance(flash_attn, str) else flash_attn)
    draft_setting = draft or settings.draft
    draft_path = drafts.resolve(draft_setting, path, local_candidates() if draft_setting == "auto" else [])
    return load_settings.load_params(path, chosen, draft_path, **flags), settings
