"""A runtime's malformed error reply reaches the call that waits for it; the client's reader keeps reading.

Before: `RpcError.from_dict` called `.get` on a string `error`, the AttributeError ended the CLI client's
reader thread, and every pending call waited forever. A real runtime never sends such a reply, so a
stand-in runtime (a few lines of Python on stdio) sends it.
"""

from __future__ import annotations

import sys

import pytest

from runtime.client import RuntimeClient
from runtime.protocol import ErrorCode, RpcError, methods, parse_line

# Answers runtime.metrics with a malformed error (what the test names), and kv.info with a well-formed one.
MALFORMED_RUNTIME = r"""
import json, sys
errors = {"string": "boom", "number": 7, "list": ["boom"], "code": {"code": "x", "message": "boom"},
          "message": {"code": -32603, "message": ["boom"]}}
kind = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "runtime.metrics":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": errors[kind]}), flush=True)
    elif msg.get("method") == "shutdown":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"ok": True}}), flush=True)
        break
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "still here"}}), flush=True)
"""


@pytest.mark.parametrize("kind", ["string", "number", "list", "code", "message"])
def test_a_malformed_error_reply_fails_its_call_and_the_reader_keeps_reading(tmp_path, kind):
    script = tmp_path / "malformed.py"
    script.write_text(MALFORMED_RUNTIME)
    client = RuntimeClient([sys.executable, str(script), kind])
    try:
        first = client.start(methods.RUNTIME_METRICS)
        second = client.start(methods.RUNTIME_METRICS)
        for call in (first, second):
            with pytest.raises(RpcError) as caught:
                call.result(timeout=30)  # before the fix: TimeoutError, the reader thread had died
            assert "malformed error reply" in caught.value.message or "boom" in caught.value.message
        # The reader is still alive: a later call gets its (well-formed) answer.
        with pytest.raises(RpcError, match="still here"):
            client.request(methods.KV_CLEAR, timeout=30)
    finally:
        client.close()


def test_from_dict_names_what_is_wrong():
    error = RpcError.from_dict("boom")
    assert error.code == ErrorCode.INVALID_REQUEST and "must be an object" in error.message and "boom" in error.message
    assert "error.code must be an integer" in RpcError.from_dict({"code": "x", "message": "m"}).message
    assert "error.message must be a string" in RpcError.from_dict({"code": 1, "message": {}}).message
    response = parse_line('{"jsonrpc": "2.0", "id": 3, "error": ""}')
    assert response.id == 3 and isinstance(response.error, RpcError)
