"""RuntimeLink on its own: the client-side queue of engine jobs, request timeouts, the liveness check.

The queue runs against the real runtime. A runtime that hangs cannot be made
on purpose with the real one, so a stand-in that answers initialize and then
goes silent plays it.
"""

from __future__ import annotations

import sys

import pytest

from app.runtime_link import ConnectionState, RuntimeLink
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, ModelLoadParams

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
    runtime.call("model.load", ModelLoadParams(path=str(starter_model), n_ctx=512), on_result=results.append, on_error=errors.append)
    runtime.call("chat.generate", params("q", "Hi"), on_result=results.append, on_error=errors.append)
    runtime.call("chat.generate", params("q", "Hello"), on_result=results.append, on_error=errors.append)
    runtime.call("chat.generate", params("r", "Good morning"), on_result=results.append, on_error=errors.append)
    assert runtime.queued == 4
    qtbot.waitUntil(lambda: len(results) + len(errors) == 4, timeout=240_000)
    assert errors == []  # no BUSY: the runtime never saw a job it refuses
    assert results[0]["quantization"] == "Q4_1" and all(r["text"] for r in results[1:])
    assert max(queued) == 4 and queued[-1] == 0
    assert ["q", "r"] in in_flight, "the two conversations never streamed at once"
    assert all(ids.count("q") <= 1 for ids in in_flight), "two replies of one conversation ran at once"
    assert runtime.state == ConnectionState.READY


def test_a_request_that_gets_no_answer_times_out(qtbot, link, tmp_path):
    script = tmp_path / "silent.py"
    script.write_text(SILENT_RUNTIME)
    runtime = link([sys.executable, str(script)])
    runtime.start()
    qtbot.waitUntil(lambda: runtime.state == ConnectionState.READY, timeout=20_000)
    errors = []
    runtime.call("runtime.metrics", None, on_result=lambda r: errors.append("answered?"), on_error=errors.append, timeout_ms=300)
    qtbot.waitUntil(lambda: bool(errors), timeout=5_000)
    assert errors[0].code == ErrorCode.REQUEST_TIMEOUT and "runtime.metrics got no answer" in errors[0].message


def test_a_hung_runtime_fails_the_liveness_check_and_is_restarted(qtbot, link, tmp_path):
    script = tmp_path / "silent.py"
    script.write_text(SILENT_RUNTIME)
    runtime = link([sys.executable, str(script)])
    runtime.set_heartbeat(100, 400)
    crashes = []
    runtime.sig_crashed.connect(crashes.append)
    runtime.start()
    qtbot.waitUntil(lambda: runtime.state == ConnectionState.READY, timeout=20_000)
    first_pid = runtime.pid
    qtbot.waitUntil(lambda: bool(crashes), timeout=10_000)
    assert "stopped answering" in crashes[0] and "SIGKILL" in crashes[0]
    qtbot.waitUntil(lambda: runtime.state == ConnectionState.READY and runtime.pid != first_pid, timeout=20_000)
    assert runtime.restarts == 1
