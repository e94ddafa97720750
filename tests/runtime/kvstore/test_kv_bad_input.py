"""Bad input to the kv.* methods gets a clear error, and the runtime keeps serving."""

import pytest

from runtime.protocol import ErrorCode, KvClearResult, KvStoreInfoParams, RpcError, methods

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "method, params, match",
    [
        ("kv.store_info", {"wait_for_writes": "yes"}, "params.wait_for_writes: expected bool"),
        ("kv.store_info", {"flush": True}, "unknown field(s) flush"),
        ("kv.clear", {"everything": True}, "unknown field(s) everything"),
        ("kv.clear", [1], "params: expected object"),
    ],
)
def test_bad_kv_params_are_refused_by_name(runtime, method, params, match):
    with pytest.raises(RpcError) as info:
        runtime.request_unchecked(method, params, timeout=30)
    assert info.value.code == ErrorCode.INVALID_PARAMS and match in info.value.message, info.value.message
    assert runtime.request(methods.KV_STORE_INFO, timeout=30).enabled is True  # still serving


def test_store_info_and_clear_without_a_model_loaded(tmp_path):
    import os

    from runtime.client import RuntimeClient

    with RuntimeClient(env=dict(os.environ, LOKAL_CACHE_DIR=str(tmp_path))) as client:
        client.initialize("pytest")
        info = client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)
        assert info.entries == 0 and info.pending_writes == 0 and info.path == str(tmp_path / "kv")
        assert client.request(methods.KV_CLEAR, timeout=30) == KvClearResult(removed_files=0, freed_bytes=0)
