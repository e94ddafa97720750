"""The model files on this machine (models.list, models.add, models.remove)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional


@dataclass
class LocalModel:
    id: str
    path: str
    name: str
    source: Literal["hf_cache", "added", "bundled"]  # bundled: in Lokal's models folder (the starter model and any GGUF put there)
    size: int
    quantization: str = "unknown"
    architecture: str = "unknown"
    n_params: int = 0
    context_length: int = 0
    repo: Optional[str] = None
    files: list[str] = field(default_factory=list)  # every part of a split model
    problem: Optional[str] = None  # why it cannot be loaded (unreadable header, missing part)
    group: str = ""  # what the quantizations of one model share ("Qwen2.5 Coder 1.5B Instruct"): the window's menu groups by it
    # A multimodal projector beside the model (downloaded with a vision model's level): ModelLoadParams.mmproj_path.
    mmproj: Optional[str] = None
    identity: str = ""  # the file's identity (runtime/models/identity.py): one menu entry and one set of load settings per file, wherever it lies


@dataclass
class ModelsListResult:
    models: list[LocalModel]


@dataclass
class ModelsAddParams:
    path: str


@dataclass
class ModelsRemoveParams:
    id: str
    # A file the user added from their own folder only leaves the list, unless this asks to delete the file
    # itself too. Downloads (the Hugging Face cache) and files in Lokal's models folder are always deleted.
    delete_file: bool = False


@dataclass
class ModelsRemoveResult:
    removed: bool
    freed_bytes: int
