"""The window's remote mode (QNetworkAccessManager, no thread) against a real `lokal serve` on loopback."""

import openai
import pytest

from serve_process import MODEL_NAME
from app.remote.client import EventStream, RemoteClient
from app.remote.endpoint_model import Endpoint

pytestmark = pytest.mark.slow


def endpoint_of(served) -> Endpoint:
    return Endpoint("test", "lokal serve", served.url)


def test_event_stream_reassembles_events_cut_anywhere():
    stream = EventStream()
    data = b'data: {"a": 1}\r\n\r\n: comment\n\ndata: [DONE]\n\n'
    events = []
    for i in range(len(data)):
        events += stream.feed(data[i : i + 1])
    assert events == ['{"a": 1}', "[DONE]"]


def test_lists_the_endpoints_models(qtbot, served):
    client = RemoteClient()
    with qtbot.waitSignal(client.sig_models, timeout=30_000) as signal:
        client.list_models(endpoint_of(served), served.key)
    endpoint, ids = signal.args
    assert endpoint.id == "test" and ids == [MODEL_NAME]


def test_a_wrong_key_is_reported_in_the_servers_words(qtbot, served):
    client = RemoteClient()
    with qtbot.waitSignal(client.sig_models_failed, timeout=30_000) as signal:
        client.list_models(endpoint_of(served), "lokal-wrong")
    assert "401" in signal.args[1] and "API key" in signal.args[1]


def test_an_unreachable_endpoint_fails_cleanly(qtbot, served):
    client = RemoteClient()
    closed = Endpoint("gone", "gone", f"http://127.0.0.1:{served.port}/nothing-here/v1")
    with qtbot.waitSignal(client.sig_models_failed, timeout=30_000) as signal:
        client.list_models(closed, served.key)
    assert "404" in signal.args[1]


def test_streams_a_chat_reply_with_client_side_figures(qtbot, served):
    messages = [{"role": "user", "content": "Name a fruit."}]
    expected = served.openai().chat.completions.create(model=MODEL_NAME, messages=messages, max_tokens=8, temperature=0.0)
    client = RemoteClient()
    reply = client.chat(endpoint_of(served), served.key, MODEL_NAME, messages, max_tokens=8, temperature=0.0)
    deltas = []
    reply.sig_delta.connect(deltas.append)
    with qtbot.waitSignal(reply.sig_finished, timeout=120_000) as signal:
        pass
    text, reason, stats = signal.args
    assert text == expected.choices[0].message.content == "".join(deltas)
    assert reason == expected.choices[0].finish_reason
    assert stats.completion_tokens == expected.usage.completion_tokens
    assert stats.prompt_tokens == expected.usage.prompt_tokens
    assert 0 < stats.ttft_ms <= stats.total_ms
    if stats.completion_tokens > 1 and len(deltas) > 1:
        assert stats.decode_tokens_per_s > 0
    # The same conversation again: the server kept its prefix, and the client shows it.
    assert stats.prompt_tokens_reused == stats.prompt_tokens - 1


def test_cancel_stops_the_reply_and_the_server_serves_on(qtbot, served):
    client = RemoteClient()
    reply = client.chat(endpoint_of(served), served.key, MODEL_NAME, [{"role": "user", "content": "Count from 1 to 1000."}], max_tokens=900, temperature=0.0)
    with qtbot.waitSignal(reply.sig_delta, timeout=120_000):
        pass
    with qtbot.waitSignal(reply.sig_finished, timeout=30_000) as signal:
        reply.cancel()
    assert signal.args[1] == "cancelled"
    served.wait_health(running=False, queued=0)
    again = served.openai().chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Hi"}], max_tokens=2)
    assert again.choices[0].message.content


def test_server_errors_reach_the_window(qtbot, served):
    client = RemoteClient()
    reply = client.chat(endpoint_of(served), served.key, "no-such-model", [{"role": "user", "content": "Hi"}])
    with qtbot.waitSignal(reply.sig_failed, timeout=30_000) as signal:
        pass
    assert "404" in signal.args[0] and "no-such-model" in signal.args[0]
    with pytest.raises(openai.NotFoundError):
        served.openai().chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "Hi"}])
