"""The window's fit of a load counts a vision model's projector (its weights load beside the model's), as the catalog's does."""

from __future__ import annotations

from app.models.loader import fitting_context, header_of, prepare
from runtime.llama import memory
from runtime.models.load_settings import LoadSettings


def test_a_context_that_fits_without_the_projector_falls_back_to_the_default_when_the_projector_fills_memory(starter_model):
    header, settings = header_of(str(starter_model)), LoadSettings()
    assert fitting_context(header, 16_384, settings) == 16_384
    assert fitting_context(header, 16_384, settings, projector_size=memory.available_ram()) == 8_192  # the model's own default


def test_the_prepared_load_names_the_projector_and_its_size(starter_model, tmp_path):
    projector = tmp_path / "mmproj-test.gguf"
    projector.write_bytes(b"\0" * 4096)
    prepared = prepare(str(starter_model), None, [(str(starter_model), starter_model.stat().st_size)], [], str(projector))
    assert (prepared.choice.mmproj_path, prepared.choice.params().mmproj_path, prepared.projector_size) == (str(projector), str(projector), 4096)
    assert prepare(str(starter_model), None, [], []).choice.params().mmproj_path is None
