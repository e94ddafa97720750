"""Every kind of bad input gets a clear JSON-RPC error, and the runtime keeps serving after it."""

import threading

import pytest

from bad_input import expect_error, still_serving
from gguf_files import write_gguf
from runtime.client import RuntimeClient, RuntimeDied
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, InitializeParams, ModelLoadParams, RpcError, methods

pytestmark = pytest.mark.slow


def test_model_path_that_does_not_exist(runtime, tmp_path):
    expect_error(runtime, "model.load", {"path": str(tmp_path / "missing.gguf")}, ErrorCode.MODEL_NOT_FOUND, "not found")


def test_file_that_is_not_gguf(runtime, tmp_path):
    p = tmp_path / "readme.gguf"
    p.write_text("hello, I am not a model\n" * 100)
    expect_error(runtime, "model.load", {"path": str(p)}, ErrorCode.INVALID_MODEL, "not a GGUF")


def test_truncated_gguf(runtime, starter_model, tmp_path):
    p = tmp_path / "truncated.gguf"
    with open(starter_model, "rb") as src:
        p.write_bytes(src.read(30_000_000))
    expect_error(runtime, "model.load", {"path": str(p)}, ErrorCode.INVALID_MODEL, "truncated")


def test_model_too_large_for_memory_is_refused_before_loading(runtime, tmp_path):
    p = write_gguf(tmp_path / "giant.gguf", metadata={"general.architecture": "llama", "llama.block_count": 80}, tensor_elements=100 * 2**30)
    error = expect_error(runtime, "model.load", {"path": str(p)}, ErrorCode.MODEL_TOO_LARGE, "GiB")
    assert error.data["needed_bytes"] > error.data["available_bytes"]


def test_malformed_json_lines_get_parse_errors(runtime):
    runtime.send_raw(b'{"jsonrpc": "2.0", "id": 99, "method": \n')
    runtime.send_raw(b"\xff\xfe not even utf-8\n")
    runtime.send_raw(b'{"jsonrpc": "2.0", "id": 5}\n')
    still_serving(runtime)  # replies come in order: the errors are in by now
    codes = [e.code for e in runtime.unrouted_errors]
    assert codes == [ErrorCode.PARSE_ERROR, ErrorCode.PARSE_ERROR, ErrorCode.INVALID_REQUEST]


def test_unknown_method(runtime):
    expect_error(runtime, "model.explode", {}, ErrorCode.METHOD_NOT_FOUND, "model.explode")


def test_wrong_parameter_types(runtime):
    expect_error(runtime, "model.load", {"path": 42}, ErrorCode.INVALID_PARAMS, "params.path")
    expect_error(runtime, "chat.generate", {"conversation_id": "c", "messages": [{"role": "user", "content": "x"}], "max_tokens": "many"}, ErrorCode.INVALID_PARAMS, "params.max_tokens")
    expect_error(runtime, "chat.generate", {"conversation_id": "c", "messages": [{"role": "wizard", "content": "x"}]}, ErrorCode.INVALID_PARAMS, "params.messages[0].role")
    expect_error(runtime, "chat.generate", [1, 2], ErrorCode.INVALID_PARAMS, "params")


def test_generate_before_any_model_is_loaded(runtime):
    expect_error(runtime, "chat.generate", {"conversation_id": "c", "messages": [{"role": "user", "content": "hi"}]}, ErrorCode.NO_MODEL_LOADED, "model.load")


def test_requests_before_initialize_are_refused(starter_model):
    with RuntimeClient() as client:
        with pytest.raises(RpcError) as info:
            client.request(methods.RUNTIME_METRICS, timeout=30)
        assert info.value.code == ErrorCode.NOT_INITIALIZED
        with pytest.raises(RpcError) as info:
            client.request(methods.INITIALIZE, InitializeParams(protocol_version="2.0"), timeout=30)
        assert info.value.code == ErrorCode.VERSION_MISMATCH
        assert client.initialize().protocol_version.startswith("1.")


def test_a_second_reply_in_the_same_conversation_or_a_load_while_one_runs_is_refused_with_busy(loaded_runtime):
    started = threading.Event()
    params = ChatGenerateParams("busy", [ChatMessage("user", "Tell me a long story.")], max_tokens=400, temperature=0.8, seed=3)
    call, wait = loaded_runtime.generate(params, lambda t: started.set())
    assert started.wait(60)
    with pytest.raises(RpcError) as info:
        loaded_runtime.request(methods.CHAT_GENERATE, ChatGenerateParams("busy", [ChatMessage("user", "hi")]), timeout=30)
    assert info.value.code == ErrorCode.BUSY
    assert info.value.data["running_request_id"] == call.id
    with pytest.raises(RpcError) as info:
        loaded_runtime.request(methods.MODEL_UNLOAD, timeout=30)
    assert info.value.code == ErrorCode.BUSY and info.value.data["running_request_id"] == call.id
    # Another conversation streams beside it.
    other = loaded_runtime.chat(ChatGenerateParams("other", [ChatMessage("user", "hi")], max_tokens=4, temperature=0), timeout=60)
    assert other.finish_reason in ("stop", "length")
    assert not call.future.done(), "the long reply should still be streaming"
    loaded_runtime.cancel(call.id)
    assert wait(30).finish_reason == "cancelled"
    # the refused request lost nothing: the same request now runs
    result = loaded_runtime.chat(ChatGenerateParams("busy", [ChatMessage("user", "hi")], max_tokens=4, temperature=0), timeout=60)
    assert result.finish_reason in ("stop", "length")


def test_prompt_longer_than_the_context(starter_model):
    with RuntimeClient() as client:
        client.initialize()
        loaded = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=64))
        assert loaded.n_ctx >= 64  # llama.cpp may round the context up
        # A conversation that no longer fits goes on without its oldest turns (runtime/engine/context_window.py).
        turns = [ChatMessage("user", "word " * (loaded.n_ctx // 2)), ChatMessage("assistant", "word " * (loaded.n_ctx // 2)), ChatMessage("user", "hi")]
        result = client.chat(ChatGenerateParams("long", turns, max_tokens=2), timeout=60)
        assert result.stats.context_dropped_messages == 2 and result.stats.prompt_tokens < loaded.n_ctx
        # Only a single message that cannot fit on its own is an error.
        with pytest.raises(RpcError) as info:
            client.chat(ChatGenerateParams("long", [ChatMessage("user", "word " * (loaded.n_ctx + 10))]), timeout=60)
        assert info.value.code == ErrorCode.CONTEXT_OVERFLOW
        assert info.value.data["n_ctx"] == loaded.n_ctx
        still_serving(client)


def test_runtime_abort_is_reported_plainly(loaded_runtime, starter_model):
    import os
    import signal

    with RuntimeClient() as client:
        client.initialize()
        client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512))
        started = threading.Event()
        _call, wait = client.generate(ChatGenerateParams("x", [ChatMessage("user", "Write a long story.")], max_tokens=500), lambda t: started.set())
        assert started.wait(60)
        os.kill(client.pid, signal.SIGABRT)  # what llama.cpp's GGML_ABORT does to the process
        with pytest.raises(RuntimeDied) as info:
            wait(30)
        assert "SIGABRT" in str(info.value) and "llama.cpp aborted" in str(info.value)
        with pytest.raises(RuntimeDied):
            client.metrics()
