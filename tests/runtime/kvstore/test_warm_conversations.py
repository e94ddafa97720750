"""Conversations that stay warm, through the real runtime process and the real starter model.

Greedy throughout, so a reply is a fingerprint of the KV state it was computed from. Without speculation:
which drafts are verified depends on timed passes (runtime/speculative/costs.py), and a token computed in a
batch of three is not rounded as one computed alone, so two runs on a loaded machine could compute the same
reply differently.
"""

import os
import shutil
from contextlib import contextmanager

import pytest

from runtime.client import RuntimeClient
from runtime.protocol import ChatGenerateParams, ChatMessage, KvStoreInfoParams, ModelLoadParams, methods

pytestmark = pytest.mark.slow

N_CTX = 512
TURN_1 = [("system", "You are a helpful assistant. You answer in one or two sentences."), ("user", "What is the capital of France, and what river runs through it?")]
NEXT_QUESTION = ("user", "And which river runs through Rome?")
POET = [("system", "You are a poet who writes short lines."), ("user", "Write one line about the sea at night, with the moon, the stars and a small boat in it.")]


@contextmanager
def runtime_with_store(cache_dir, model, store="on", **load):
    env = dict(os.environ, LOKAL_CACHE_DIR=str(cache_dir), LOKAL_KV_MIN_TOKENS="16", LOKAL_KV_STORE=store)
    client = RuntimeClient(env=env)
    try:
        client.initialize("pytest")
        client.load_model(ModelLoadParams(path=str(model), n_ctx=load.pop("n_ctx", N_CTX), **load))
        yield client
    finally:
        client.close()


def ask(client, messages, conversation="a", max_tokens=8):
    params = ChatGenerateParams(conversation, [ChatMessage(r, c) for r, c in messages], max_tokens=max_tokens, temperature=0.0, speculation="off")
    return client.chat(params, timeout=180)


def store_info(client):
    return client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)


def test_restored_from_disk_after_a_restart_the_reply_is_byte_identical_to_the_warm_one(starter_model, tmp_path):
    first_dir, restart_dir = tmp_path / "first", tmp_path / "restart"
    with runtime_with_store(first_dir, starter_model) as client:
        turn1 = ask(client, TURN_1)
        info = store_info(client)
        assert info.entries == 1 and info.pending_writes == 0 and info.disk_bytes > 0
        shutil.copytree(first_dir / "kv", restart_dir / "kv")  # the store as it was after turn 1
        turn2 = TURN_1 + [("assistant", turn1.text), NEXT_QUESTION]
        warm = ask(client, turn2, max_tokens=32)
        assert warm.stats.prompt_tokens_restored == 0 and warm.stats.prompt_tokens_reused > turn1.stats.prompt_tokens

    with runtime_with_store(restart_dir, starter_model) as client:  # a new process: nothing in RAM
        restored = ask(client, turn2, max_tokens=32)
    s = restored.stats
    assert s.kv_restore_source == "disk" and s.kv_restore_ms > 0
    assert s.prompt_tokens_restored >= turn1.stats.prompt_tokens
    # The time it saved: the restored tokens at the prefill speed the first process measured, less the restore.
    assert turn1.stats.prompt_tokens_evaluated >= 32
    expected_saved = s.prompt_tokens_restored * 1000 / turn1.stats.prefill_tokens_per_s - s.kv_restore_ms
    assert s.kv_restore_saved_ms == pytest.approx(max(0.0, expected_saved), rel=0.01, abs=0.01)
    assert s.prompt_tokens_restored + s.prompt_tokens_reused + s.prompt_tokens_evaluated == s.prompt_tokens
    # only the new turn is evaluated, exactly what the warm process evaluated
    assert s.prompt_tokens_evaluated == warm.stats.prompt_tokens_evaluated
    assert restored.text == warm.text


def test_a_conversation_resting_while_another_decodes_gives_its_cells_to_the_store_and_comes_back_identical(starter_model, tmp_path):
    """Resting caches slow every token decoded beside them (one unified KV cache: bench/warm_seats.py), so a
    conversation the store holds gives up its cells while another one's reply decodes, and comes back from
    the store. Without a store nothing can bring it back, so it keeps them."""
    def three_turns(client):
        # A turn's after-work (the next turn's header evaluated, the state saved) runs after its reply is sent.
        # Whether it is done when the next request comes decides where the cells land: above the other
        # conversation's or below, a's given up at b's admission or mid-reply, b's at a's return or not. A greedy
        # reply can tell cell layouts apart (attention sums its cells in another order), so the test fixes it.
        a1 = ask(client, TURN_1, conversation="a")
        store_info(client)
        b1 = ask(client, POET, conversation="b")
        store_info(client)
        used = client.metrics("a").kv_tokens_used  # the window's context meter, a on screen
        assert used >= a1.stats.prompt_tokens + a1.stats.completion_tokens
        back = ask(client, TURN_1 + [("assistant", a1.text), NEXT_QUESTION], conversation="a", max_tokens=24)
        return a1, b1, back, used

    with runtime_with_store(tmp_path / "off", starter_model, store="off", n_seq=2) as client:
        a1, b1, resident, used = three_turns(client)
        s = resident.stats
        assert s.kv_restore_source == "" and s.prompt_tokens_restored == 0
        assert s.prompt_tokens_reused >= a1.stats.prompt_tokens + a1.stats.completion_tokens and s.prompt_tokens_evaluated < 30

    with runtime_with_store(tmp_path / "on", starter_model, n_seq=2) as client:
        a1_again, b1_again, back, used_again = three_turns(client)
        assert (a1_again.text, b1_again.text, used_again) == (a1.text, b1.text, used)  # given up, its tokens still count
        s = back.stats
        assert s.kv_restore_source == "ram" and s.prompt_tokens_reused == 0
        assert s.prompt_tokens_restored >= a1.stats.prompt_tokens + a1.stats.completion_tokens and s.prompt_tokens_evaluated < 30
        assert back.text == resident.text
        # b's turn ran while a decoded in the other seat: b comes back from the store too
        b2 = ask(client, POET + [("assistant", b1.text), ("user", "Another one.")], conversation="b")
        assert b2.stats.kv_restore_source == "ram" and b2.stats.prompt_tokens_restored >= b1.stats.prompt_tokens


def test_switching_conversations_restores_from_ram(starter_model, tmp_path):
    with runtime_with_store(tmp_path, starter_model, n_seq=1) as client:  # one sequence: a switch replaces the cache
        a1 = ask(client, TURN_1, conversation="a")
        b1 = ask(client, POET, conversation="b")
        assert b1.stats.prompt_tokens_restored == 0
        back = ask(client, TURN_1 + [("assistant", a1.text), NEXT_QUESTION], conversation="a")
        s = back.stats
        assert s.kv_restore_source == "ram"
        assert s.prompt_tokens_restored >= a1.stats.prompt_tokens
        assert s.prompt_tokens_evaluated < 30
        # and b comes back too: each conversation keeps its own state
        b2 = ask(client, POET + [("assistant", b1.text), ("user", "Another one.")], conversation="b")
        assert b2.stats.kv_restore_source == "ram" and b2.stats.prompt_tokens_restored >= b1.stats.prompt_tokens
        info = store_info(client)
        assert info.entries == 2 and info.ram_bytes > 0


def test_states_for_other_settings_or_another_model_file_are_never_used(starter_model, tmp_path):
    with runtime_with_store(tmp_path, starter_model) as client:
        a1 = ask(client, TURN_1)
        store_info(client)
    turn2 = TURN_1 + [("assistant", a1.text), NEXT_QUESTION]
    # a slightly different model file: same size and header, one weight byte changed near the end
    other = tmp_path / "other.gguf"
    shutil.copyfile(starter_model, other)
    with open(other, "r+b") as f:
        f.seek(-1000, os.SEEK_END)
        byte = f.read(1)
        f.seek(-1000, os.SEEK_END)
        f.write(bytes([byte[0] ^ 0x01]))
    for model, load in ((starter_model, {"n_ctx": 256}), (starter_model, {"type_k": "q8_0"}), (other, {})):
        with runtime_with_store(tmp_path, model, **load) as client:
            result = ask(client, turn2, max_tokens=1)
            assert result.stats.prompt_tokens_restored == 0, (model, load)
            assert result.stats.prompt_tokens_evaluated == result.stats.prompt_tokens, (model, load)
    # the same file under another name is the same model: its state is used
    renamed = tmp_path / "renamed.gguf"
    os.link(starter_model, renamed) if os.stat(starter_model).st_dev == os.stat(tmp_path).st_dev else shutil.copyfile(starter_model, renamed)
    with runtime_with_store(tmp_path, renamed) as client:
        assert ask(client, turn2, max_tokens=1).stats.kv_restore_source == "disk"


def test_a_state_for_another_prefix_is_never_used(starter_model, tmp_path):
    other_system = [("system", "You are a pirate. You answer in one or two sentences, like a pirate.")] + TURN_1[1:]
    with runtime_with_store(tmp_path, starter_model, store="off") as client:
        cold = ask(client, other_system)
    with runtime_with_store(tmp_path, starter_model) as client:
        ask(client, TURN_1, conversation="a")  # saved, and still in the live cache: both share little with the next prompt
        result = ask(client, other_system, conversation="d")
    assert result.stats.prompt_tokens_restored == 0
    assert result.text == cold.text


def test_corrupted_and_truncated_state_files_are_discarded_and_the_turn_prefills(starter_model, tmp_path):
    with runtime_with_store(tmp_path, starter_model) as client:
        a1 = ask(client, TURN_1, conversation="a")
        c1 = ask(client, POET, conversation="c")
        store_info(client)
    files = sorted((tmp_path / "kv").glob("*.kvs"), key=os.path.getmtime)
    assert len(files) == 2
    corrupted, truncated = files
    raw = bytearray(corrupted.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    corrupted.write_bytes(bytes(raw))
    with open(truncated, "r+b") as f:
        f.truncate(truncated.stat().st_size // 2)
    with runtime_with_store(tmp_path, starter_model, store="off") as client:
        cold_a = ask(client, TURN_1 + [("assistant", a1.text), NEXT_QUESTION], conversation="a")
    with runtime_with_store(tmp_path, starter_model) as client:
        assert not truncated.exists()  # found at start: its length does not match its header
        result = ask(client, TURN_1 + [("assistant", a1.text), NEXT_QUESTION], conversation="a")
        assert result.stats.prompt_tokens_restored == 0 and result.stats.kv_restore_source == ""
        assert result.stats.prompt_tokens_evaluated == result.stats.prompt_tokens
        assert result.text == cold_a.text
        c2 = ask(client, POET + [("assistant", c1.text), ("user", "Another.")], conversation="c")
        assert c2.stats.prompt_tokens_restored == 0
        info = store_info(client)
        assert info.entries == 2  # both conversations saved afresh after their turns


def test_q8_0_kv_loads_generates_and_its_state_is_about_half_of_f16(starter_model, tmp_path):
    sizes = {}
    for kv in ("f16", "q8_0"):
        with runtime_with_store(tmp_path / kv, starter_model, type_k=kv, type_v=kv) as client:
            result = ask(client, TURN_1)
            assert result.text and result.stats.completion_tokens > 0
            info = store_info(client)
            sizes[kv] = (info.disk_bytes, result.stats.prompt_tokens + result.stats.completion_tokens)
    (f16_bytes, f16_tokens), (q8_bytes, q8_tokens) = sizes["f16"], sizes["q8_0"]
    ratio = (q8_bytes / q8_tokens) / (f16_bytes / f16_tokens)
    assert 0.45 < ratio < 0.6, ratio  # q8_0 is 34 bytes per 32 values against f16's 64


def test_store_size_is_visible_and_clearable(starter_model, tmp_path):
    with runtime_with_store(tmp_path, starter_model) as client:
        ask(client, TURN_1)
        info = store_info(client)
        assert info.enabled and info.path == str(tmp_path / "kv")
        assert info.entries == 1 and info.disk_bytes == sum(p.stat().st_size for p in (tmp_path / "kv").glob("*.kvs"))
        cleared = client.request(methods.KV_CLEAR, timeout=30)
        assert cleared.removed_files == 1 and cleared.freed_bytes == info.disk_bytes
        info = store_info(client)
        assert info.entries == 0 and info.disk_bytes == 0 and info.ram_bytes == 0
        assert list((tmp_path / "kv").glob("*.kvs")) == []


def test_a_scored_prompt_saves_no_state(starter_model, tmp_path):
    # An evaluation run scores thousands of prompts (echo with logprobs): none is read from a saved state again.
    prompt = "The quick brown fox jumps over the lazy dog. " * 4
    with runtime_with_store(tmp_path, starter_model) as client:
        scored = client.chat(ChatGenerateParams("scored", [], max_tokens=1, temperature=0.0, prompt=prompt, logprobs=0, prompt_logprobs=True), timeout=120)
        assert len(scored.prompt_logprobs) == scored.stats.prompt_tokens - 1 > 16
        assert store_info(client).entries == 0
        client.chat(ChatGenerateParams("written", [], max_tokens=1, temperature=0.0, prompt=prompt), timeout=120)
        assert store_info(client).entries == 1  # the same prompt, not scored: saved as any reply's


def test_a_reply_nobody_continues_saves_no_state(starter_model, tmp_path):
    # An API request's choices after the first (runtime/api/reply.py): the first keeps the prompt's state for them all.
    with runtime_with_store(tmp_path, starter_model) as client:
        client.chat(ChatGenerateParams("a/1", [ChatMessage(r, c) for r, c in TURN_1], max_tokens=4, temperature=0.0, keeps_state=False), timeout=120)
        assert store_info(client).entries == 0
        ask(client, TURN_1)
        assert store_info(client).entries == 1
