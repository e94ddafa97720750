"""The API key file: made once, kept private, and repaired rather than trusted when it is not."""

import os
import stat

from runtime.api import keys


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_key_is_made_once_with_mode_0600(tmp_path):
    path = tmp_path / "api-key"
    key = keys.load_or_create(path)
    assert key.startswith("lokal-") and len(key) > 40
    assert mode(path) == 0o600
    assert keys.load_or_create(path) == key


def test_an_empty_key_file_gets_a_new_key(tmp_path):
    path = tmp_path / "api-key"
    path.write_text("  \n")
    key = keys.load_or_create(path)
    assert key.startswith("lokal-") and path.read_text().strip() == key and mode(path) == 0o600


def test_a_key_readable_by_others_is_made_private(tmp_path):
    path = tmp_path / "api-key"
    path.write_text("lokal-given\n")
    os.chmod(path, 0o644)
    assert keys.load_or_create(path) == "lokal-given"
    assert mode(path) == 0o600


def test_bearer_header_matching():
    assert keys.matches("k1", "Bearer k1") and keys.matches("k1", "bearer  k1")
    assert not keys.matches("k1", "Bearer k2") and not keys.matches("k1", "k1") and not keys.matches("k1", None) and not keys.matches("k1", "Basic k1")
