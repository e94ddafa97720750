"""Saved KV state files whose (intact, correctly hashed) header claims a negative count: damage like any other,
so the store deletes them at start instead of failing with another exception or keeping them."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import xxhash

from runtime.kvstore import state_file
from runtime.kvstore.state_file import StateFileError
from runtime.kvstore.store import StateStore

TAG = {"model": "m1", "n_ctx": 512, "type_k": "f16", "type_v": "f16", "swa_full": True, "flash_attn": None, "llama_cpp": "x"}


def rewrite_header(path, **changes) -> None:
    """Change fields of a state file's header and hash it again, as a crafted (not a damaged) file would be."""
    raw = path.read_bytes()
    magic, length, _hash = struct.unpack_from("<8sIQ", raw)
    header = json.loads(raw[20 : 20 + length])
    header.update(changes)
    new = json.dumps(header, sort_keys=True).encode()
    path.write_bytes(struct.pack("<8sIQ", magic, len(new), xxhash.xxh3_64_intdigest(new)) + new + raw[20 + length :])


def saved(tmp_path, n_tokens: int, state_bytes: int):
    path = tmp_path / "a.kvs"
    state_file.write(path, "a", TAG, np.arange(n_tokens, dtype=np.int32), np.zeros(state_bytes, dtype=np.uint8))
    return path


# Each keeps the file's length equal to what the header adds up to, so only the sign is wrong.
CLAIMS = {
    "negative state_bytes": (dict(n_tokens=20, state_bytes=-40), 10, 0, "state_bytes = -40"),
    "negative n_tokens": (dict(n_tokens=-1, state_bytes=4 + 4 * 10 + 3), 10, 3, "n_tokens = -1"),
    "huge n_tokens": (dict(n_tokens=1e999), 10, 3, "header does not parse"),
}


@pytest.mark.parametrize("name", CLAIMS)
def test_a_header_with_a_negative_count_is_a_state_file_error(tmp_path, name):
    changes, n_tokens, state_bytes, match = CLAIMS[name]
    path = saved(tmp_path, n_tokens, state_bytes)
    rewrite_header(path, **changes)
    with open(path, "rb") as f, pytest.raises(StateFileError, match=match):
        state_file.read_index(f, path.stat().st_size)


@pytest.mark.parametrize("name", CLAIMS)
def test_the_store_deletes_such_a_file_at_start_and_keeps_working(tmp_path, name):
    changes, n_tokens, state_bytes, _match = CLAIMS[name]
    rewrite_header(saved(tmp_path, n_tokens, state_bytes), **changes)
    store = StateStore(tmp_path)
    assert store.info()["entries"] == 0
    assert list(tmp_path.iterdir()) == []
    store.put("b", TAG, np.array([1, 2, 3], dtype=np.int32), np.ones(100, dtype=np.uint8))
    assert store.flush(10) and [p.name for p in tmp_path.iterdir()] == ["b.kvs"]
