import pytest

from serve_process import Served


@pytest.fixture(scope="module")
def served(starter_model):
    """One `lokal serve` with the starter model, ready, shared by a test module (one reply at a time, queue of 1, small body limit)."""
    server = Served("--n-threads", "1", "--parallel", "1", "--max-queue", "1", "--max-body", "65536", "--cors", "http://allowed.example", model=str(starter_model))
    server.wait_ready()
    yield server
    assert server.close() == 0, "lokal serve did not stop cleanly on SIGTERM"
