"""The window's line buffer from the runtime is bounded (issue #27, "Smaller items"): a real child process
writes a line longer than the link takes, with or without its end; the link kills it as it kills a runtime
that hangs, says why, and fails the waiting call. A long line under the bound is still taken whole.
"""

from __future__ import annotations

import sys

import pytest

from app.runtime_link import ConnectionState, RuntimeLink

LIMIT = 1024 * 1024  # the test's bound: the child writes a few times this, not MAX_LINE_BYTES

# Answers initialize with `backend` padded to argv[1] bytes; argv[2] "endless" writes that many bytes
# with no newline instead. Either way it then waits for its stdin to close, as a live runtime does.
LONG_LINE_RUNTIME = r"""
import json, os, sys
size, how = int(sys.argv[1]), sys.argv[2]
request = json.loads(sys.stdin.readline())
if how == "endless":
    chunk = b"x" * 65536
    for _ in range(size // len(chunk) + 1):
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
else:
    result = {"protocol_version": "1.0", "lokal_version": "0", "llama_cpp_version": "0", "backend": "x" * size,
              "devices": [], "capabilities": [], "pid": os.getpid()}
    sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\n")
    sys.stdout.buffer.flush()
sys.stdin.read()
"""


@pytest.fixture
def started(qtbot):
    """start(size, how): a link to LONG_LINE_RUNTIME, bounded at LIMIT; closed and deleted (as Qt wants it) after the test."""
    links = []

    def start(size: int, how: str) -> RuntimeLink:
        link = RuntimeLink([sys.executable, "-c", LONG_LINE_RUNTIME, str(size), how], auto_restart=False)
        link.max_line_bytes = LIMIT
        links.append(link)
        link.start()
        return link

    yield start
    for link in links:
        link.close()
        link.deleteLater()
    qtbot.wait(20)  # the deferred deletes run before the next test


@pytest.mark.parametrize("how", ["endless", "whole"])
def test_a_line_over_the_bound_kills_the_runtime_and_says_why(qtbot, started, how):
    link = started(3 * LIMIT, how)
    with qtbot.waitSignal(link.sig_crashed, timeout=60_000) as crashed:
        pass
    assert f"longer than {LIMIT} bytes" in crashed.args[0]
    assert link.state == ConnectionState.CRASHED
    assert len(link._buffer) == 0  # nothing of it kept


def test_a_long_line_under_the_bound_is_taken_whole(qtbot, started):
    size = LIMIT - 4096  # the whole line, JSON around the padding included, stays under the bound
    link = started(size, "whole")
    with qtbot.waitSignal(link.sig_ready, timeout=60_000) as ready:
        pass
    assert ready.args[0].backend == "x" * size
    assert link.state == ConnectionState.READY

