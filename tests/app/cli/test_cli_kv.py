"""`lokal kv`: the store's size and clearing it, from the command line, after a real `lokal chat` saved a state."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def lokal(*args, env, timeout=180):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_kv_info_and_clear(starter_model, tmp_path):
    env = dict(os.environ, LOKAL_CACHE_DIR=str(tmp_path), LOKAL_KV_MIN_TOKENS="16")
    chat = lokal("chat", "--model", str(starter_model), "--n-ctx", "512", "--max-tokens", "8", "--temperature", "0", "Name three colours, please.", env=env)
    assert chat.returncode == 0, chat.stderr
    info = lokal("kv", "--json", env=env)
    assert info.returncode == 0, info.stderr
    data = json.loads(info.stdout)
    on_disk = sum(p.stat().st_size for p in (tmp_path / "kv").glob("*.kvs"))
    assert data["entries"] == 1 and data["disk_bytes"] == on_disk > 0
    text = lokal("kv", env=env)
    assert "1 saved states" in text.stdout and "MiB" in text.stdout
    cleared = lokal("kv", "clear", env=env)
    assert cleared.returncode == 0 and "removed 1 saved states" in cleared.stdout
    assert list((tmp_path / "kv").glob("*.kvs")) == []
    assert lokal("kv", "frobnicate", env=env).returncode == 2  # argparse names the valid actions
