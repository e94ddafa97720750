import pytest

from serve_process import serving


@pytest.fixture(scope="module")
def served(starter_model):
    """One `lokal serve` with the starter model, ready, shared by a test module (one reply at a time, queue of 1, small body limit)."""
    with serving(starter_model, "--parallel", "1", "--max-queue", "1", "--max-body", "65536", "--cors", "http://allowed.example") as server:
        yield server
