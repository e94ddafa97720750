"""Saves that append: each turn writes only the KV it added, and base + parts restore exactly, through the real
runtime process and the real starter model (greedy, so a reply is a fingerprint of the state it came from)."""

import json
import os
import shutil
import struct

import pytest
import xxhash

from runtime.kvstore import state_file
from test_warm_conversations import NEXT_QUESTION, TURN_1, ask, runtime_with_store, store_info

pytestmark = pytest.mark.slow

FOLLOW_UPS = [NEXT_QUESTION, ("user", "And Madrid?")]


def conversation(client, turns: int) -> list:
    """TURN_1 and `turns` - 1 follow-ups, each with the reply before it; the messages of the next turn."""
    messages = list(TURN_1)
    for follow_up in FOLLOW_UPS[: turns - 1]:
        messages += [("assistant", ask(client, messages).text), follow_up]
    messages.append(("assistant", ask(client, messages).text))
    return messages + [("user", "Thanks. And Berlin?")]


def parts(kv_dir) -> list:
    files = sorted(kv_dir.glob("*.kvs"), key=lambda p: (len(p.name), p.name))
    out = []
    for path in files:
        with open(path, "rb") as f:
            header, _ = state_file.read_index(f, path.stat().st_size)
        out.append((path, header))
    return out


def test_later_turns_write_only_their_own_kv_and_base_and_parts_restore_to_the_same_reply(starter_model, tmp_path):
    first_dir, restart_dir = tmp_path / "first", tmp_path / "restart"
    with runtime_with_store(first_dir, starter_model) as client:
        nxt = conversation(client, turns=3)
        store_info(client)
        shutil.copytree(first_dir / "kv", restart_dir / "kv")
        warm = ask(client, nxt, max_tokens=24)
        assert warm.stats.prompt_tokens_restored == 0
    chain = parts(restart_dir / "kv")
    assert [h.first for _, h in chain] == [0, 1, 2] and len({h.chain for _, h in chain}) == 1
    base = chain[0][1]
    per_token = base.state_bytes / base.n_tokens
    for path, header in chain[1:]:
        # a part holds the KV of the tokens its turn added, not the conversation's: its size is what those tokens take
        assert header.state_bytes == pytest.approx(header.n_tokens * per_token, rel=0.05)
        assert header.n_tokens < base.n_tokens and path.stat().st_size < 1.1 * header.n_tokens * per_token + 4096
    with runtime_with_store(restart_dir, starter_model) as client:
        restored = ask(client, nxt, max_tokens=24)
    s = restored.stats
    assert s.kv_restore_source == "disk" and s.prompt_tokens_restored > base.n_tokens  # the parts were applied too
    assert s.prompt_tokens_evaluated == warm.stats.prompt_tokens_evaluated
    assert restored.text == warm.text


def test_a_state_saved_before_chains_still_restores(starter_model, tmp_path):
    first_dir, restart_dir = tmp_path / "first", tmp_path / "restart"
    with runtime_with_store(first_dir, starter_model) as client:
        nxt = conversation(client, turns=1)
        store_info(client)
        ((path, header),) = parts(first_dir / "kv")
        warm = ask(client, nxt, max_tokens=24)
    # the same state in the format the store wrote before chains (format 1: no chain, no segments)
    _, (segment,) = state_file.read_state(path, header.tag)
    tokens = segment.tokens.astype("<i4")
    h = xxhash.xxh3_128()
    h.update(tokens.tobytes())
    h.update(segment.state.tobytes())
    old = json.dumps(
        {"format": 1, "key": header.key, "tag": header.tag, "n_tokens": int(tokens.size), "state_bytes": int(segment.state.size), "checksum": h.hexdigest(), "prefill_ms_per_token": header.prefill_ms_per_token},
        sort_keys=True,
    ).encode()
    os.makedirs(restart_dir / "kv")
    (restart_dir / "kv" / path.name).write_bytes(struct.pack("<8sIQ", b"LOKALKV\x01", len(old), xxhash.xxh3_64_intdigest(old)) + old + tokens.tobytes() + segment.state.tobytes())
    with runtime_with_store(restart_dir, starter_model) as client:
        restored = ask(client, nxt, max_tokens=24)
    assert restored.stats.kv_restore_source == "disk" and restored.stats.prompt_tokens_restored >= header.n_tokens - 1
    assert restored.text == warm.text
