"""The real runtime process with the real starter model, driven through the protocol."""

import threading
import time

import pytest

from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, KvStoreInfoParams, RpcError, methods

pytestmark = pytest.mark.slow



def ask(client, messages, conversation="c1", **kw):
    kw.setdefault("max_tokens", 32)
    kw.setdefault("temperature", 0.0)
    deltas = []
    result = client.chat(ChatGenerateParams(conversation, [ChatMessage(r, c) for r, c in messages], **kw), deltas.append, timeout=120)
    return result, deltas


def test_initialize_reports_versions_backend_and_devices(runtime):
    info = runtime.initialize("pytest")
    assert info.protocol_version.startswith("1.")
    assert info.llama_cpp_version == "0.3.36"
    assert info.backend == "cpu"
    cpu = [d for d in info.devices if d.type == "cpu"]
    assert cpu and cpu[0].memory_total > 0
    assert "chat.cancel" in info.capabilities
    assert info.pid == runtime.pid


def test_multi_turn_conversation_reuses_the_kv_cache(loaded_runtime):
    history = [("system", "You are terse."), ("user", "Name a colour.")]
    first, deltas = ask(loaded_runtime, history)
    assert first.text and "".join(deltas) == first.text
    s1 = first.stats
    assert s1.prompt_tokens_evaluated + s1.prompt_tokens_reused == s1.prompt_tokens
    assert s1.completion_tokens > 0 and s1.ttft_ms > 0 and s1.decode_tokens_per_s > 0

    history += [("assistant", first.text), ("user", "Name another one.")]
    second, _ = ask(loaded_runtime, history)
    s2 = second.stats
    # Everything up to the end of the first reply is already in the cache.
    assert s2.prompt_tokens_reused >= s1.prompt_tokens + s1.completion_tokens - 1
    # Only the new message and the template tokens around it are evaluated.
    assert 0 < s2.prompt_tokens_evaluated <= 20, s2

    history += [("assistant", second.text), ("user", "And a third?")]
    third, _ = ask(loaded_runtime, history)
    s3 = third.stats
    assert s3.prompt_tokens_evaluated <= 20 and s3.prompt_tokens_reused > s2.prompt_tokens

    metrics = loaded_runtime.metrics()
    assert metrics.kv_tokens_total >= metrics.kv_tokens_used >= s3.prompt_tokens  # this conversation's context, of all held
    assert metrics.kv_bytes_used == metrics.kv_tokens_total * 23040 and metrics.n_seq >= 1


def test_the_next_turns_header_is_evaluated_while_the_user_reads(loaded_runtime):
    history = [("system", "You are terse."), ("user", "Name a fruit.")]
    first, _ = ask(loaded_runtime, history, conversation="header")
    loaded_runtime.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)  # the reply's after-work has run
    s1 = first.stats

    history += [("assistant", first.text), ("user", "Name a vegetable.")]
    second, _ = ask(loaded_runtime, history, conversation="header")
    # The next turn reuses more than the prompt and the reply: the template's `<|im_end|>\n<|im_start|>user`
    # was evaluated after the reply, and was exactly what the template writes.
    s2 = second.stats
    assert s2.prompt_tokens_reused >= s1.prompt_tokens + s1.completion_tokens + 2, (s1, s2)
    assert s2.prompt_tokens_reused + s2.prompt_tokens_evaluated == s2.prompt_tokens


def test_regenerate_and_edit_rewind_to_the_common_prefix(loaded_runtime):
    base = [("user", "Count from one to five.")]
    a, _ = ask(loaded_runtime, base, conversation="r")
    again, _ = ask(loaded_runtime, base, conversation="r")
    # Greedy regenerate: same prompt, the cache rewinds to it and the reply is the same.
    assert again.text == a.text
    assert again.stats.prompt_tokens_evaluated == 1  # the last prompt token, re-run for its logits
    edited, _ = ask(loaded_runtime, [("user", "Count from one to three.")], conversation="r")
    assert edited.stats.prompt_tokens_reused > 0
    assert edited.stats.prompt_tokens_evaluated < edited.stats.prompt_tokens
    cold = None
    # A fresh process answers the edited prompt the same way: the rewind left no stale state behind.
    from runtime.client import RuntimeClient
    from runtime.protocol import ModelLoadParams

    with RuntimeClient() as fresh:
        fresh.initialize()
        fresh.load_model(ModelLoadParams(path=loaded_runtime_model_path(loaded_runtime), n_ctx=2048))
        cold, _ = ask(fresh, [("user", "Count from one to three.")], conversation="r")
    assert cold.text == edited.text


def loaded_runtime_model_path(client):
    from runtime.models import wheels

    return str(wheels.path_of(wheels.STARTER))


def test_non_ascii_text_streams_whole_characters(loaded_runtime):
    result, deltas = ask(loaded_runtime, [("user", "Répète exactement: « Ça va très bien, merci ! » 日本語 🎉")], max_tokens=48)
    assert "".join(deltas) == result.text
    assert all("\ufffd" not in d for d in deltas)
    assert any(ord(ch) > 127 for ch in result.text), result.text


def test_stop_strings_and_max_tokens(loaded_runtime):
    long, _ = ask(loaded_runtime, [("user", "Write a long story about a cat.")], max_tokens=40)
    assert long.finish_reason == "length" and long.stats.completion_tokens == 40
    word = long.text.split()[3]
    stopped, deltas = ask(loaded_runtime, [("user", "Write a long story about a cat.")], max_tokens=40, stop=[word])
    assert stopped.finish_reason == "stop"
    assert word not in stopped.text and long.text.startswith(stopped.text)
    assert "".join(deltas) == stopped.text


def test_cancel_stops_the_reply_at_once_and_returns_the_partial_text(loaded_runtime):
    """Counted in tokens, not milliseconds: on a loaded machine every step is slower, and the cancel with it."""
    first_delta = threading.Event()
    deltas = []
    cancelled_at: list[int] = []

    def on_text(t):
        deltas.append(t)
        first_delta.set()

    params = ChatGenerateParams("cancel", [ChatMessage("user", "Write a very long essay about the sea.")], max_tokens=1500, temperature=0.8, seed=1)
    call, wait = loaded_runtime.generate(params, on_text)
    assert first_delta.wait(60)
    sent = time.perf_counter()
    cancelled_at.append(len(deltas))
    assert loaded_runtime.cancel(call.id) is True
    result = wait(30)
    latency = time.perf_counter() - sent
    after_cancel = len(deltas) - cancelled_at[0]
    print(f"cancel: {after_cancel} more text pieces, {latency * 1000:.0f} ms")
    assert result.finish_reason == "cancelled"
    assert result.text == "".join(deltas) and result.text
    # The first text came at once and the cancel right after it: a tenth of max_tokens is far more than the steps
    # a loaded 2-core machine runs before the engine sees the cancel (tens), far less than a runtime that ignored it.
    assert result.stats.completion_tokens < params.max_tokens // 10, f"{result.stats.completion_tokens} tokens ({latency * 1000:.0f} ms)"
    # and it keeps serving
    again, _ = ask(loaded_runtime, [("user", "Hi")], max_tokens=4)
    assert again.finish_reason in ("stop", "length")


def test_metrics_are_answered_while_a_reply_streams(loaded_runtime):
    streaming = threading.Event()
    params = ChatGenerateParams("m", [ChatMessage("user", "Write a long poem about rivers.")], max_tokens=300, temperature=0.8, seed=2)
    call, wait = loaded_runtime.generate(params, lambda t: streaming.set())
    assert streaming.wait(60)
    metrics = loaded_runtime.metrics()
    assert metrics.generation is not None and metrics.generation.completion_tokens >= 1
    assert metrics.rss_bytes > 50_000_000
    loaded_runtime.cancel(call.id)
    wait(30)
