"""Where the shared Hugging Face hub cache is, from huggingface_hub's constants alone.

Importing those takes milliseconds; the hub client (runtime/hub/hf.py) takes about 0.2 s of Python, which the window
must not spend while it opens (its worker would hold the GIL, and the event loop would wait on it).
"""

from __future__ import annotations

import os
from pathlib import Path

from huggingface_hub import constants


def cache_dir() -> Path:
    """The shared Hugging Face hub cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub)."""
    explicit = os.environ.get("HF_HUB_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    home = os.environ.get("HF_HOME")
    if home:
        return Path(home).expanduser() / "hub"
    return Path(constants.HF_HUB_CACHE)


def repo_folder(cache: Path, repo: str) -> Path:
    """A repository's folder in the hub cache, named as huggingface_hub names it."""
    return cache / ("models--" + repo.replace("/", "--"))
