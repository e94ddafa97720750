"""The runtime's `models.*` methods: the GGUF files on this machine (runtime/models/local.py).

They read headers and walk folders, so they run on the server's pool (their
lane in protocol.METHODS), never in the engine's job slot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from runtime.models import local
from runtime.protocol import Empty, LocalModel, ModelsAddParams, ModelsListResult, ModelsRemoveParams, ModelsRemoveResult


class ModelsService:
    def __init__(self, cache_dir: Path | None = None):
        self._cache_dir = cache_dir  # the Hugging Face cache; None: huggingface_hub's own

    def handlers(self) -> dict[str, Callable[[Any], Any]]:
        return {"models.list": self.list, "models.add": self.add, "models.remove": self.remove}

    def list(self, _params: Empty) -> ModelsListResult:
        return ModelsListResult(local.list_models(self._cache_dir))

    def add(self, params: ModelsAddParams) -> LocalModel:
        return local.add(params.path)

    def remove(self, params: ModelsRemoveParams) -> ModelsRemoveResult:
        removed, freed = local.remove(params.id, params.delete_file, self._cache_dir)
        return ModelsRemoveResult(removed, freed)
