"""The typed method handles and the runtime's one dispatch table that answers them."""

from __future__ import annotations

import io

import pytest

from runtime.dispatch import DispatchTable
from runtime.protocol import Empty, KvClearResult, ModelUnloadResult, methods
from runtime.server import RuntimeServer


def declared_handles() -> dict[str, methods.Method[object, object]]:
    return {name: value for name, value in vars(methods).items() if isinstance(value, methods.Method)}


def test_every_method_handle_is_in_the_table_of_names_under_its_own_name():
    handles = declared_handles()
    assert sorted(m.name for m in handles.values()) == sorted(methods.METHODS)
    for constant, method in handles.items():
        assert methods.METHODS[method.name] is method
        assert constant == method.name.upper().replace(".", "_"), f"{constant} names {method.name}"


def test_every_notification_handle_is_in_the_table_of_names():
    topics = {name: value for name, value in vars(methods).items() if isinstance(value, methods.Topic)}
    assert sorted(t.name for t in topics.values()) == sorted(methods.TOPICS) == sorted(methods.NOTIFICATIONS)


def test_the_server_has_a_handler_for_every_method_and_none_for_another():
    server = RuntimeServer(io.BytesIO(), io.BytesIO())
    assert server.dispatch.missing() == []
    assert server.dispatch.extra() == []


def test_a_table_refuses_a_job_as_an_immediate_handler_a_second_handler_and_names_what_is_missing():
    table = DispatchTable()
    with pytest.raises(ValueError, match="model.unload runs in the job slot"):
        table.handle(methods.MODEL_UNLOAD, lambda _params: ModelUnloadResult(True))
    with pytest.raises(ValueError, match="kv.clear is not a job"):
        table.handle_job(methods.KV_CLEAR, lambda _params, _job, _on_text: KvClearResult(0, 0))
    table.handle(methods.KV_CLEAR, lambda _params: KvClearResult(0, 0))
    with pytest.raises(ValueError, match="kv.clear has a handler already"):
        table.handle(methods.KV_CLEAR, lambda _params: KvClearResult(1, 1))
    assert table.handler(methods.KV_CLEAR)(Empty()) == KvClearResult(0, 0)
    assert "kv.clear" not in table.missing() and "chat.generate" in table.missing()
    off_the_books = methods.Method("kv.clear", Empty, KvClearResult, methods.Lane.POOL)  # same name, another lane
    table.handle(off_the_books, lambda _params: KvClearResult(0, 0))
    assert table.extra() == ["kv.clear"]
