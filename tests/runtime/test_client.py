"""RuntimeClient's typed contract: the params dataclass in, the result dataclass out, errors with the runtime's traceback logged."""

from __future__ import annotations

import logging
import sys

import pytest

from runtime.client import RuntimeClient
from runtime.protocol import ErrorCode, HubCatalogResult, KvStoreInfo, KvStoreInfoParams, RpcError, methods

# A stand-in runtime for what a real one does only when it has a bug: an internal error with its traceback,
# and a result that does not match its dataclass.
FAULTY_RUNTIME = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "runtime.metrics":
        error = {"code": -32603, "message": "internal error: ZeroDivisionError: division by zero",
                 "data": {"traceback": "Traceback (most recent call last):\n  File \"engine.py\", line 1\nZeroDivisionError: division by zero"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}), flush=True)
    elif msg.get("method") == "hub.catalog":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"entries": "none"}}), flush=True)
    elif msg.get("method") == "shutdown":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"ok": True}}), flush=True)
        break
"""


@pytest.fixture
def faulty(tmp_path):
    script = tmp_path / "faulty.py"
    script.write_text(FAULTY_RUNTIME)
    client = RuntimeClient([sys.executable, str(script)])
    yield client
    client.close()


def test_results_are_their_dataclasses(runtime):
    info = runtime.request(methods.KV_STORE_INFO, KvStoreInfoParams())
    assert isinstance(info, KvStoreInfo)
    assert isinstance(runtime.request(methods.HUB_CATALOG), HubCatalogResult)


def test_params_must_be_the_methods_dataclass(runtime):
    with pytest.raises(TypeError, match="kv.store_info takes KvStoreInfoParams, not dict"):
        runtime.request(methods.KV_STORE_INFO, {"wait_for_writes": True})


def test_an_internal_error_raises_and_its_remote_traceback_is_logged(faulty, caplog):
    with caplog.at_level(logging.ERROR, logger="lokal.client"), pytest.raises(RpcError) as info:
        faulty.request(methods.RUNTIME_METRICS, timeout=30)
    assert info.value.code == ErrorCode.INTERNAL_ERROR
    assert "runtime.metrics failed in the runtime" in caplog.text and 'File "engine.py"' in caplog.text


def test_a_result_that_does_not_match_its_dataclass_is_an_error_naming_the_field(faulty):
    with pytest.raises(RpcError) as info:
        faulty.request(methods.HUB_CATALOG, timeout=30)
    assert info.value.code == ErrorCode.INVALID_PARAMS and "result.entries" in info.value.message
