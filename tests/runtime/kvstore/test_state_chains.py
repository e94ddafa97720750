"""Chains of parts: a whole state, then only what each turn added, with real files and real bytes (no model needed).

The bytes stand in for llama.cpp's: the store never looks inside them. That a chain
restores to exactly the state it was saved from, in llama.cpp, is
test_appended_states.py's (the starter model through the runtime).
"""

import json
import struct

import numpy as np
import xxhash

from runtime.kvstore import state_file
from runtime.kvstore.store import StateStore, chain_tokens

TAG = {"model": "m1", "n_ctx": 512, "type_k": "f16", "type_v": "f16", "swa_full": True, "flash_attn": None, "llama_cpp": "x"}
PER_TOKEN = 2000  # state bytes per token in these tests (the starter model's are 23 kB, a 1.5B's 28 kB)


def state_of(tokens: np.ndarray, start: int = 0) -> np.ndarray:
    """Bytes that stand for the KV of tokens[start:], different for each token id and position."""
    rng = np.random.default_rng([int(t) for t in tokens[: max(1, tokens.size)]] + [start, int(tokens.size)])
    return rng.integers(0, 256, (tokens.size - start) * PER_TOKEN, dtype=np.uint8)


def turns(n_turns: int, first: int = 40, per_turn: int = 10) -> list[np.ndarray]:
    """The token ids a conversation's sequence holds after each turn: each turn extends the last."""
    ids = np.arange(1000, 1000 + first + n_turns * per_turn, dtype=np.int32)
    return [ids[: first + i * per_turn] for i in range(n_turns)]


def save(store: StateStore, key: str, tokens: np.ndarray) -> str:
    """What saved_states.save does: a part with what the turn added when the chain shares enough, else a whole state."""
    start = store.append_start(key, TAG, tokens)
    if start is not None and start == tokens.size:
        return "nothing"
    if start is not None and store.append(key, TAG, start, tokens, state_of(tokens, start)):
        return "part"
    store.put(key, TAG, tokens, state_of(tokens))
    return "whole"


def restored(store: StateStore, prompt: np.ndarray) -> tuple[np.ndarray, list]:
    match = store.best_match(TAG, prompt)
    assert match is not None
    loaded = store.load(match.entry)
    assert loaded is not None
    return loaded.tokens, loaded.segments


def test_each_turn_after_the_first_writes_only_its_own_tokens(tmp_path):
    store = StateStore(tmp_path, max_parts=100)
    written = []
    for tokens in turns(5):
        before = {p.name: p.stat().st_size for p in tmp_path.glob("*.kvs")}
        kind = save(store, "a", tokens)
        assert store.flush(10)
        after = {p.name: p.stat().st_size for p in tmp_path.glob("*.kvs")}
        written.append((kind, sum(size for name, size in after.items() if before.get(name) != size)))
    assert [kind for kind, _ in written] == ["whole", "part", "part", "part", "part"]
    for _kind, n_bytes in written[1:]:
        # 10 new tokens: their state and ids, and a header
        assert 10 * PER_TOKEN < n_bytes < 10 * PER_TOKEN + 1000
    assert sorted(p.name for p in tmp_path.glob("*.kvs")) == ["a.1.kvs", "a.2.kvs", "a.3.kvs", "a.4.kvs", "a.kvs"]


def test_a_chain_survives_a_restart_and_restores_segment_by_segment(tmp_path):
    store = StateStore(tmp_path)
    history = turns(4)
    for tokens in history:
        save(store, "a", tokens)
    assert save(store, "a", history[-1]) == "nothing"  # nothing new since: nothing written
    assert store.flush(10)
    again = StateStore(tmp_path)
    tokens, segments = restored(again, np.concatenate([history[-1], [7, 7]]).astype(np.int32))
    assert np.array_equal(tokens, history[-1])
    assert [(s.start, s.tokens.size) for s in segments] == [(0, 40), (40, 10), (50, 10), (60, 10)]
    assert np.array_equal(segments[0].state, state_of(history[0]))
    assert np.array_equal(segments[2].state, state_of(history[2], 50))


def test_a_turn_that_rewinds_a_little_starts_its_part_where_it_differs(tmp_path):
    store = StateStore(tmp_path)
    history = turns(2)
    save(store, "a", history[0])
    save(store, "a", history[1])
    # the next turn re-tokenized the reply's last 3 ids differently
    rewound = np.concatenate([history[1][:-3], [5, 6, 7, 8, 9]]).astype(np.int32)
    assert save(store, "a", rewound) == "part"
    assert store.flush(10)
    tokens, segments = restored(StateStore(tmp_path), rewound)
    assert np.array_equal(tokens, rewound)
    assert segments[-1].start == history[1].size - 3 and np.array_equal(chain_tokens(segments), rewound)


def test_an_edit_early_in_the_conversation_saves_a_whole_state_and_the_old_parts_go(tmp_path):
    store = StateStore(tmp_path)
    for tokens in turns(3):
        save(store, "a", tokens)
    assert store.flush(10)
    edited = np.concatenate([turns(1)[0][:10], np.arange(50, dtype=np.int32)]).astype(np.int32)
    assert save(store, "a", edited) == "whole"
    assert store.flush(10)
    assert [p.name for p in tmp_path.glob("*.kvs")] == ["a.kvs"]
    tokens, segments = restored(StateStore(tmp_path), edited)
    assert np.array_equal(tokens, edited) and len(segments) == 1


def test_a_long_chain_is_packed_by_the_writer_into_one_file_that_restores_the_same(tmp_path):
    store = StateStore(tmp_path, max_parts=4)
    history = turns(7)
    for i, tokens in enumerate(history):
        if i == 3:  # one turn rewinds: its predecessor's last part is partly cut away, one before it wholly
            tokens = np.concatenate([tokens[:45], np.arange(900, 920, dtype=np.int32)]).astype(np.int32)
            history[i:] = [np.concatenate([tokens, h[60:]]).astype(np.int32) for h in history[i:]]
            tokens = history[i]
        save(store, "a", tokens)
        assert store.flush(10)
    files = sorted(p.name for p in tmp_path.glob("*.kvs"))
    assert len(files) <= 4 and "a.kvs" in files
    fresh = StateStore(tmp_path)
    tokens, segments = restored(fresh, history[-1])
    assert np.array_equal(tokens, history[-1]) and np.array_equal(chain_tokens(segments), history[-1])
    # the part of turn 3 (positions 50..60) was wholly replaced by turn 4's, which starts at 45: left out
    assert all(not (s.start == 50) for s in segments)
    assert sum(s.state.size for s in segments) < sum(h.size for h in history) * PER_TOKEN


def test_a_part_without_its_predecessor_or_from_another_chain_is_deleted_and_the_chain_ends_before_it(tmp_path):
    store = StateStore(tmp_path)
    history = turns(4)
    for tokens in history:
        save(store, "a", tokens)
    assert store.flush(10)
    (tmp_path / "a.2.kvs").unlink()  # a crash, or a disk that lost it
    again = StateStore(tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.kvs")) == ["a.1.kvs", "a.kvs"]
    tokens, _ = restored(again, history[-1])
    assert np.array_equal(tokens, history[1])
    # a part written for another chain under this key (another runtime's whole state replaced part 0)
    state_file.write(tmp_path / "a.kvs", "a", TAG, history[0], state_of(history[0]))
    third = StateStore(tmp_path)
    assert [p.name for p in tmp_path.glob("*.kvs")] == ["a.kvs"]
    tokens, _ = restored(third, history[-1])
    assert np.array_equal(tokens, history[0])


def test_a_damaged_part_is_discarded_with_its_chain_when_it_would_be_used(tmp_path):
    store = StateStore(tmp_path, ram_budget=0)
    for tokens in turns(3):
        save(store, "a", tokens)
    assert store.flush(10)
    raw = bytearray((tmp_path / "a.1.kvs").read_bytes())
    raw[-10] ^= 0xFF
    (tmp_path / "a.1.kvs").write_bytes(bytes(raw))
    again = StateStore(tmp_path)
    match = again.best_match(TAG, turns(3)[-1])
    assert again.load(match.entry) is None
    assert again.best_match(TAG, turns(3)[-1]) is None


def old_state_file(path, key: str, tokens: np.ndarray, state: np.ndarray) -> None:
    """A state file as the store wrote it before chains (format 1): one whole state, written byte by byte here."""
    tokens = np.ascontiguousarray(tokens, dtype="<i4")
    h = xxhash.xxh3_128()
    h.update(tokens.tobytes())
    h.update(state.tobytes())
    header = json.dumps(
        {"format": 1, "key": key, "tag": TAG, "n_tokens": int(tokens.size), "state_bytes": int(state.size), "checksum": h.hexdigest(), "prefill_ms_per_token": 0.5},
        sort_keys=True,
    ).encode()
    path.write_bytes(struct.pack("<8sIQ", b"LOKALKV\x01", len(header), xxhash.xxh3_64_intdigest(header)) + header + tokens.tobytes() + state.tobytes())


def test_a_state_saved_before_chains_restores_and_the_next_turn_adds_a_part_to_it(tmp_path):
    history = turns(2)
    old_state_file(tmp_path / "a.kvs", "a", history[0], state_of(history[0]))
    store = StateStore(tmp_path)
    tokens, segments = restored(store, history[1])
    assert np.array_equal(tokens, history[0]) and np.array_equal(segments[0].state, state_of(history[0]))
    assert save(store, "a", history[1]) == "part"
    assert store.flush(10)
    tokens, segments = restored(StateStore(tmp_path), history[1])
    assert np.array_equal(tokens, history[1]) and [s.start for s in segments] == [0, 40]


def test_clear_removes_every_part(tmp_path):
    store = StateStore(tmp_path)
    for tokens in turns(3):
        save(store, "a", tokens)
    assert store.flush(10)
    removed, _freed = store.clear()
    assert removed == 3 and list(tmp_path.iterdir()) == []


def test_a_state_file_of_a_format_this_store_does_not_know_is_deleted_at_start(tmp_path):
    history = turns(1)
    state_file.write(tmp_path / "a.kvs", "a", TAG, history[0], state_of(history[0]))
    raw = (tmp_path / "a.kvs").read_bytes()
    _magic, length, _hash = struct.unpack_from("<8sIQ", raw)
    header = json.loads(raw[20 : 20 + length])
    header["format"] = 99
    new = json.dumps(header, sort_keys=True).encode()
    (tmp_path / "a.kvs").write_bytes(struct.pack("<8sIQ", b"LOKALKV\x01", len(new), xxhash.xxh3_64_intdigest(new)) + new + raw[20 + length :])
    store = StateStore(tmp_path)
    assert store.info()["entries"] == 0 and list(tmp_path.iterdir()) == []
    assert save(store, "a", history[0]) == "whole" and store.flush(10)
    assert [p.name for p in tmp_path.iterdir()] == ["a.kvs"]


def test_over_many_turns_each_turn_writes_less_than_twice_its_own_kv_and_the_chain_stays_short(tmp_path):
    """Every max_parts-th part is written with the single parts before it as one file, instead of alone."""
    store = StateStore(tmp_path, max_parts=4)
    history = turns(13)
    save(store, "a", history[0])
    assert store.flush(10)
    first = sum(p.stat().st_size for p in tmp_path.glob("*.kvs"))
    counted = 0
    real_write = state_file.write_part

    def counting(*args, **kwargs):
        nonlocal counted
        size = real_write(*args, **kwargs)
        counted += size
        return size

    state_file.write_part = counting
    try:
        for tokens in history[1:]:
            save(store, "a", tokens)
            assert store.flush(10)
            assert len(list(tmp_path.glob("*.kvs"))) <= 1 + 12 // 4 + 3
    finally:
        state_file.write_part = real_write
    new_kv = (history[-1].size - history[0].size) * PER_TOKEN
    assert counted < 2 * new_kv, (counted, new_kv, first)
    tokens, segments = restored(StateStore(tmp_path), history[-1])
    assert np.array_equal(tokens, history[-1]) and np.array_equal(chain_tokens(segments), history[-1])
