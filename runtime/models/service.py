"""The runtime's `models.*` methods: the GGUF files on this machine (runtime/models/local.py).

They read headers and walk folders, so they run on the server's pool (their
lane in runtime.protocol.methods), never in the engine's job slot.
"""

from __future__ import annotations

from pathlib import Path
from runtime.dispatch import DispatchTable
from runtime.models import local
from runtime.models.identity import file_identity
from runtime.protocol import Empty, LocalModel, ModelsAddParams, ModelsListResult, ModelsRemoveParams, ModelsRemoveResult, methods


class ModelsService:
    def __init__(self, cache_dir: Path | None = None):
        self._cache_dir = cache_dir  # the Hugging Face cache; None: huggingface_hub's own

    def register(self, table: DispatchTable) -> None:
        table.handle(methods.MODELS_LIST, self.list)
        table.handle(methods.MODELS_ADD, self.add)
        table.handle(methods.MODELS_REMOVE, self.remove)

    def list(self, _params: Empty) -> ModelsListResult:
        return ModelsListResult([with_identity(model) for model in local.list_models(self._cache_dir)])

    def add(self, params: ModelsAddParams) -> LocalModel:
        return with_identity(local.add(params.path))

    def remove(self, params: ModelsRemoveParams) -> ModelsRemoveResult:
        removed, freed = local.remove(params.id, params.delete_file, self._cache_dir)
        return ModelsRemoveResult(removed, freed)


def with_identity(model: LocalModel) -> LocalModel:
    """`model` with its file's identity; a file that cannot be read keeps none (its problem says why)."""
    if not model.problem:
        try:
            model.identity = file_identity(model.path)
        except OSError:
            pass
    return model
