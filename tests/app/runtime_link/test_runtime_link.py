"""RuntimeLink on its own: the client-side queue of engine jobs, request timeouts, the liveness check.

The queue runs against the real runtime. A runtime that hangs cannot be made
on purpose with the real one, so a stand-in that answers initialize and then
goes silent plays it.
"""

from __future__ import annotations

import logging
import sys

import pytest

from app.runtime_link import ConnectionState, RuntimeLink
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, ModelLoadParams, methods

SILENT_RUNTIME = r"""
import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocol_version": "1.0", "lokal_version": "0", "llama_cpp_version": "0", "backend": "cpu",
                  "devices": [], "capabilities": [], "pid": os.getpid()}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    # everything else: no answer, as a hung runtime
"""

# Answers runtime.metrics with an internal error that carries the runtime's traceback, and hub.catalog with
# a result that does not match HubCatalogResult: what a real runtime does only when it has a bug.
FAULTY_RUNTIME = SILENT_RUNTIME.replace("    # everything else: no answer, as a hung runtime", """    elif msg.get("method") == "runtime.metrics":
        error = {"code": -32603, "message": "internal error: ZeroDivisionError: division by zero",
                 "data": {"traceback": "Traceback (most recent call last):\\n  File \\"engine.py\\", line 1\\nZeroDivisionError: division by zero"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}), flush=True)
    elif msg.get("method") == "hub.catalog":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"entries": "none"}}), flush=True)""")


@pytest.fixture
def link(qtbot):
    links = []

    def make(command=None):
        made = RuntimeLink(command)
        links.append(made)
        return made

    yield make
    for made in links:
        made.close()
        made.deleteLater()
    qtbot.wait(20)


@pytest.mark.slow
def test_jobs_queue_on_the_client_instead_of_getting_busy_and_two_conversations_stream_at_once(qtbot, link, starter_model):
    runtime = link()
    runtime.start()
    results, errors, queued, in_flight = [], [], [], []
    runtime.sig_queue_changed.connect(queued.append)
    runtime.sig_delta.connect(lambda *_args: in_flight.append(sorted(call.conversation_id for call in runtime.jobs)))
    params = lambda conversation, text: ChatGenerateParams(conversation, [ChatMessage("user", text)], max_tokens=8, temperature=0.0)
    # Sent at once, before the runtime is even ready: the load alone, then the replies, one per conversation at a time.
    runtime.call(methods.MODEL_LOAD, ModelLoadParams(path=str(starter_model), n_ctx=512), on_result=results.append, on_error=errors.append)
    runtime.call(methods.CHAT_GENERATE, params("q", "Hi"), on_result=results.append, on_error=errors.append)
    runtime.call(methods.CHAT_GENERATE, params("q", "Hello"), on_result=results.append, on_error=errors.append)
    runtime.call(methods.CHAT_GENERATE, params("r", "Good morning"), on_result=results.append, on_error=errors.append)
    assert runtime.queued == 4
    qtbot.waitUntil(lambda: len(results) + len(errors) == 4, timeout=240_000)
    assert errors == []  # no BUSY: the runtime never saw a job it refuses
    assert results[0].quantization == "Q4_1" and all(r.text for r in results[1:])  # decoded: ModelLoadResult, ChatGenerateResult
    assert max(queued) == 4 and queued[-1] == 0
    assert ["q", "r"] in in_flight, "the two conversations never streamed at once"
    assert all(ids.count("q") <= 1 for ids in in_flight), "two replies of one conversation ran at once"
    assert runtime.state == ConnectionState.READY


def stand_in(qtbot, link, tmp_path, source: str, heartbeat: tuple[int, int] | None = None, crashes: list | None = None) -> RuntimeLink:
    """A link to a stand-in runtime (a Python script answering like one), started and ready."""
    script = tmp_path / "stand_in.py"
    script.write_text(source)
    runtime = link([sys.executable, str(script)])
    if heartbeat is not None:
        runtime.set_heartbeat(*heartbeat)
    if crashes is not None:
        runtime.sig_crashed.connect(crashes.append)
    runtime.start()
    qtbot.waitUntil(lambda: runtime.state == ConnectionState.READY, timeout=20_000)
    return runtime


def test_a_request_that_gets_no_answer_times_out(qtbot, link, tmp_path):
    runtime = stand_in(qtbot, link, tmp_path, SILENT_RUNTIME)
    errors = []
    runtime.call(methods.RUNTIME_METRICS, None, on_result=lambda r: errors.append("answered?"), on_error=errors.append, timeout_ms=300)
    qtbot.waitUntil(lambda: bool(errors), timeout=5_000)
    assert errors[0].code == ErrorCode.REQUEST_TIMEOUT and "runtime.metrics got no answer" in errors[0].message


def test_a_hung_runtime_fails_the_liveness_check_and_is_restarted(qtbot, link, tmp_path):
    crashes = []
    runtime = stand_in(qtbot, link, tmp_path, SILENT_RUNTIME, heartbeat=(100, 400), crashes=crashes)
    first_pid = runtime.pid
    qtbot.waitUntil(lambda: bool(crashes), timeout=10_000)
    assert "stopped answering" in crashes[0] and "SIGKILL" in crashes[0]
    qtbot.waitUntil(lambda: runtime.state == ConnectionState.READY and runtime.pid != first_pid, timeout=20_000)
    assert runtime.restarts == 1


def test_an_internal_error_reaches_the_caller_and_its_remote_traceback_is_logged(qtbot, link, tmp_path, caplog):
    runtime = stand_in(qtbot, link, tmp_path, FAULTY_RUNTIME)
    errors = []
    with caplog.at_level(logging.ERROR, logger="lokal.runtime_link"):
        runtime.call(methods.RUNTIME_METRICS, None, on_error=errors.append, timeout_ms=5_000)
        qtbot.waitUntil(lambda: bool(errors), timeout=5_000)
    assert errors[0].code == ErrorCode.INTERNAL_ERROR
    assert "runtime.metrics failed in the runtime" in caplog.text and "ZeroDivisionError" in caplog.text and 'File "engine.py"' in caplog.text


def test_a_result_that_does_not_match_its_dataclass_is_an_error_naming_the_field(qtbot, link, tmp_path):
    runtime = stand_in(qtbot, link, tmp_path, FAULTY_RUNTIME)
    results, errors = [], []
    runtime.call(methods.HUB_CATALOG, None, on_result=results.append, on_error=errors.append, timeout_ms=5_000)
    qtbot.waitUntil(lambda: bool(results or errors), timeout=5_000)
    assert results == [] and errors[0].code == ErrorCode.INVALID_PARAMS and "result.entries" in errors[0].message


def test_params_must_be_the_methods_dataclass(link):
    runtime = link()
    with pytest.raises(TypeError, match="hub.quants takes HubQuantsParams"):
        runtime.call(methods.HUB_QUANTS, {"repo": "org/name"})
