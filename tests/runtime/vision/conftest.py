import pytest

from vision_files import write_projector


@pytest.fixture(scope="session")
def projector_file(tmp_path_factory):
    """The test projector (a SigLIP encoder with random weights, 576-wide output: the starter model's)."""
    return write_projector(tmp_path_factory.mktemp("mmproj") / "mmproj-test-siglip.gguf")
