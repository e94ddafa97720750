import pytest

from serve_process import Served


@pytest.fixture(scope="module")
def served(starter_model):
    """A real `lokal serve` on loopback for the window's remote mode to talk to."""
    server = Served("--n-threads", "1", model=str(starter_model))
    server.wait_ready()
    yield server
    assert server.close() == 0
