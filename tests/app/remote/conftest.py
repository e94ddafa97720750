import pytest

from serve_process import serving


@pytest.fixture(scope="module")
def served(starter_model):
    """A real `lokal serve` on loopback for the window's remote mode to talk to."""
    with serving(starter_model) as server:
        yield server


@pytest.fixture
def no_keyring(monkeypatch):
    """keyring's own 'fail' backend, what headless Linux has (every store fails): the same everywhere."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    import keyring.core

    previous = keyring.core.get_keyring()
    keyring.core.set_keyring(keyring.core.load_keyring("keyring.backends.fail.Keyring"))
    yield
    keyring.core.set_keyring(previous)
