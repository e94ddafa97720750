"""Remote endpoints persist without their keys; keys go to the keyring, or to a file only the user can read."""

import json
import os

import pytest

from app.remote.endpoint_model import EndpointError, EndpointList, RemoteModelList, normalize_base_url
from app.remote.keystore import KeyStore


@pytest.fixture
def no_keyring(monkeypatch):
    # Headless Linux has no keyring service; say so explicitly, so this runs the same everywhere.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    import keyring.core

    previous = keyring.core.get_keyring()
    keyring.core.set_keyring(keyring.core.load_keyring("keyring.backends.fail.Keyring"))
    yield
    keyring.core.set_keyring(previous)


@pytest.mark.parametrize(
    "given, expected",
    [
        ("http://10.0.0.5:8000/v1", "http://10.0.0.5:8000/v1"),
        ("http://10.0.0.5:8000/v1/", "http://10.0.0.5:8000/v1"),
        ("http://10.0.0.5:8000", "http://10.0.0.5:8000/v1"),
        ("localhost:11434", "http://localhost:11434/v1"),
        ("https://llm.example.org/openai/v1", "https://llm.example.org/openai/v1"),
    ],
)
def test_base_urls_are_normalised(given, expected):
    assert normalize_base_url(given) == expected


@pytest.mark.parametrize("bad", ["", "   ", "ftp://host/v1", "http://", "http://host:notaport/v1"])
def test_bad_base_urls_are_refused_with_a_reason(bad):
    with pytest.raises(EndpointError) as err:
        normalize_base_url(bad)
    assert str(err.value)


def test_without_a_keyring_keys_go_to_a_0600_file(tmp_path, no_keyring):
    store = KeyStore(file=tmp_path / "keys.json")
    assert store.where == str(tmp_path / "keys.json")
    store.set("e1", "sk-one")
    store.set("e2", "sk-two")
    assert oct(os.stat(tmp_path / "keys.json").st_mode & 0o777) == "0o600"
    assert store.get("e1") == "sk-one" and store.get("missing") == ""
    store.delete("e1")
    assert KeyStore(file=tmp_path / "keys.json").get("e1") == "" and store.get("e2") == "sk-two"


def test_endpoints_persist_without_their_keys(qtbot, tmp_path, no_keyring):
    keys = KeyStore(file=tmp_path / "keys.json")
    endpoints = EndpointList(keys, file=tmp_path / "endpoints.json")
    with qtbot.waitSignal(endpoints.sig_changed):
        added = endpoints.add("Cluster", "http://10.1.2.3:8000", "sk-secret")
    assert endpoints.rowCount() == 1 and endpoints.data(endpoints.index(0)) == "Cluster"
    saved = (tmp_path / "endpoints.json").read_text()
    assert "sk-secret" not in saved and json.loads(saved)[0]["base_url"] == "http://10.1.2.3:8000/v1"
    again = EndpointList(keys, file=tmp_path / "endpoints.json")
    assert again.endpoints == [added] and again.key_for(added) == "sk-secret"
    again.remove(added.id)
    assert again.rowCount() == 0 and keys.get(added.id) == ""


def test_a_damaged_endpoints_file_keeps_the_good_entries(tmp_path, no_keyring):
    (tmp_path / "endpoints.json").write_text(json.dumps([{"id": "a", "name": "A", "base_url": "http://h:1/v1"}, {"id": "b"}, {"id": "c", "name": "C", "base_url": "ftp://x"}]))
    endpoints = EndpointList(KeyStore(file=tmp_path / "k.json"), file=tmp_path / "endpoints.json")
    assert [e.id for e in endpoints.endpoints] == ["a"]


def test_remote_models_are_replaced_per_endpoint(qtbot, tmp_path, no_keyring):
    endpoints = EndpointList(KeyStore(file=tmp_path / "k.json"), file=tmp_path / "e.json")
    a = endpoints.add("A", "http://a:1", "")
    b = endpoints.add("B", "http://b:1", "")
    models = RemoteModelList()
    models.set_models(a, ["m1", "m2"])
    models.set_models(b, ["m3"])
    models.set_models(a, ["m4"])
    assert [(m.endpoint.name, m.model_id) for m in models.models] == [("B", "m3"), ("A", "m4")]
    assert models.data(models.index(1)) == "m4  (A)"
    models.drop_endpoint(b.id)
    assert models.rowCount() == 1


def test_with_a_keyring_keys_go_there_and_not_to_the_file(tmp_path, monkeypatch):
    import keyring
    import keyring.core
    from keyring.backend import KeyringBackend

    class MemoryKeyring(KeyringBackend):
        """A real keyring backend (the interface the OS ones implement), holding its secrets in memory."""

        priority = 1

        def __init__(self):
            super().__init__()
            self.secrets = {}

        def get_password(self, service, username):
            return self.secrets.get((service, username))

        def set_password(self, service, username, password):
            self.secrets[(service, username)] = password

        def delete_password(self, service, username):
            self.secrets.pop((service, username))

    backend = MemoryKeyring()
    previous = keyring.get_keyring()
    keyring.core.set_keyring(backend)
    try:
        store = KeyStore(file=tmp_path / "keys.json")
        assert store.where == "the system keyring"
        store.set("e1", "sk-in-keyring")
        assert backend.secrets == {("lokal-remote-endpoint", "e1"): "sk-in-keyring"}
        assert not (tmp_path / "keys.json").exists()
        assert store.get("e1") == "sk-in-keyring"
        store.delete("e1")
        assert backend.secrets == {} and store.get("e1") == ""
    finally:
        keyring.core.set_keyring(previous)
