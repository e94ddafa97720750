"""One kind of bad input per test: the runtime answers it with a clear, typed error and keeps serving."""

from __future__ import annotations

import pytest

from runtime.protocol import RpcError


def still_serving(client) -> None:
    assert client.metrics().rss_bytes > 0


def expect_error(client, method: str, params, code: int, match: str = "") -> RpcError:
    """Send `params` as they are (they may be malformed on purpose); the error must have `code` and name `match`."""
    with pytest.raises(RpcError) as info:
        client.request_unchecked(method, params, timeout=60)
    assert info.value.code == code, info.value
    assert match in info.value.message, info.value.message
    still_serving(client)
    return info.value
