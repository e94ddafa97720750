"""Which of a download's files is the model: a vision level's download carries its projector too."""

from __future__ import annotations

import pytest

from app.catalog.pairing import model_file


def test_the_projector_downloaded_with_a_vision_level_is_not_the_model():
    snapshot = "/cache/models--ggml-org--SmolVLM2-2.2B-Instruct-GGUF/snapshots/abc"
    # "mmproj-…" sorts before "smolvlm2-…": the first GGUF by name would be the projector.
    paths = [f"{snapshot}/smolvlm2-2.2b-instruct-q4_k_m.gguf", f"{snapshot}/mmproj-SmolVLM2-2.2B-Instruct-f16.gguf"]
    assert model_file(paths) == f"{snapshot}/smolvlm2-2.2b-instruct-q4_k_m.gguf"


def test_a_download_of_a_projector_alone_has_no_model_to_load():
    with pytest.raises(ValueError, match="no GGUF file"):
        model_file(["/cache/snap/mmproj-model-f16.gguf"])
