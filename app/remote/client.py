"""An OpenAI-compatible client for the window, on QNetworkAccessManager: no thread, never a blocking call.

readyRead -> server-sent events -> StreamChunk (read from the event's JSON once,
in parse_chunk) -> sig_delta; the reply's figures are what a client can measure
itself: time to first token from its own clock, tokens from the server's `usage`
(asked for with stream_options.include_usage), tokens/s from both. They are a
GenerationStats, so the metrics panel shows a remote reply the way it shows a
local one (a figure the client cannot measure stays 0, which the panel shows as
not known).

Redirects are followed only within the endpoint's own origin (scheme, host and
port). Qt's default follows them to any host with every header set here: the
key in Authorization, and on 307/308 the conversation in the body (issue #27).
Same-origin also keeps the "key in clear" question (endpoint_model.key_in_clear)
honest: a redirect can neither turn https:// into http:// nor take a key the
person agreed to send over http:// to one host on to another.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QByteArray, QCoreApplication, QObject, QUrl, Signal
from PySide6.QtNetwork import QNetworkAccessManager, QNetworkReply, QNetworkRequest

from app.remote.endpoint_model import Endpoint
from runtime.protocol import GenerationStats

MODELS_TIMEOUT_MS = 15_000
CHAT_TIMEOUT_MS = 10 * 60_000  # a transfer that says nothing for this long is given up
REDIRECTS = QNetworkRequest.RedirectPolicy.SameOriginRedirectPolicy  # see the module docstring


def _request(endpoint: Endpoint, key: str, path: str, timeout_ms: int) -> QNetworkRequest:
    request = QNetworkRequest(QUrl(endpoint.base_url + path))
    request.setHeader(QNetworkRequest.KnownHeaders.ContentTypeHeader, "application/json")
    if key:
        request.setRawHeader(b"Authorization", f"Bearer {key}".encode())
    request.setTransferTimeout(timeout_ms)
    request.setAttribute(QNetworkRequest.Attribute.RedirectPolicyAttribute, REDIRECTS)
    return request


def error_message(reply: QNetworkReply, body: bytes) -> str:
    """The server's own words when it sent an OpenAI-style error body, else Qt's."""
    status = reply.attribute(QNetworkRequest.Attribute.HttpStatusCodeAttribute)
    if reply.error() == QNetworkReply.NetworkError.InsecureRedirectError:
        where = bytes(reply.rawHeader("Location").data()).decode("utf-8", errors="replace") or "another address"
        return (
            f"HTTP {status}: the server redirected to {where}, which is not the endpoint's own server; "
            "the redirect was not followed, so neither the key nor the conversation went there"
        )
    try:
        error = json.loads(body)["error"]
        message = error["message"] if isinstance(error, dict) else str(error)
    except (ValueError, KeyError, TypeError):
        message = reply.errorString()
    return f"HTTP {status}: {message}" if status else message


class EventStream:
    """Splits a server-sent event stream into the data of each event; bytes may arrive cut anywhere."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[str]:
        # Normalised after joining: a "\r\n" may arrive split across two reads.
        self._buffer = (self._buffer + data).replace(b"\r\n", b"\n")
        events = []
        while b"\n\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n\n", 1)
            lines = [line[5:].lstrip() for line in raw.split(b"\n") if line.startswith(b"data:")]
            if lines:
                events.append(b"\n".join(lines).decode("utf-8", errors="replace"))
        return events


@dataclass
class Usage:
    """An OpenAI server's `usage` (the last chunk, with stream_options.include_usage); None: a count it did not send."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # prompt_tokens_details.cached_tokens: the prompt's prefix the server kept


@dataclass
class StreamChunk:
    """One event of an OpenAI chat completion stream, as this client uses it."""

    text: str = ""
    finish_reason: str | None = None  # checked against the protocol's FinishReason by the chat link
    usage: Usage | None = None
    error: str | None = None  # the server's words: an error event, or an event that is not a chunk


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def parse_chunk(data: str) -> StreamChunk:
    """The event's JSON as a StreamChunk: read here once; what is missing or of another type is left out."""
    try:
        event = json.loads(data)
    except ValueError:
        return StreamChunk(error=f"the server sent something that is not JSON: {data[:80]!r}")
    if not isinstance(event, dict):
        return StreamChunk(error=f"the server sent an event that is not an object: {data[:80]!r}")
    if "error" in event:
        error = event["error"]
        return StreamChunk(error=str(_object(error).get("message", error)))
    chunk = StreamChunk()
    usage = _object(event.get("usage"))
    if usage:
        details = _object(usage.get("prompt_tokens_details"))
        chunk.usage = Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), _count(details.get("cached_tokens")))
    choices = event.get("choices")
    for choice in choices if isinstance(choices, list) else []:
        choice = _object(choice)
        text = _object(choice.get("delta")).get("content")
        chunk.text += text if isinstance(text, str) else ""
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            chunk.finish_reason = reason
    return chunk


class RemoteReply(QObject):
    """One streamed chat reply from a remote endpoint."""

    sig_delta = Signal(str)
    sig_finished = Signal(str, str, object)  # the whole text, the finish reason the server gave, the GenerationStats measured
    sig_failed = Signal(str)

    def __init__(self, reply: QNetworkReply, parent: QObject | None = None):
        super().__init__(parent)
        self._reply = reply
        self._events = EventStream()
        self._sent_at = time.perf_counter()
        self._first_at: float | None = None
        self._last_at: float | None = None
        self._usage: Usage | None = None
        self._finish_reason = "stop"
        self._error: str | None = None
        self._cancelled = False
        self._done = False
        self.text = ""
        reply.readyRead.connect(self._on_ready_read)
        reply.finished.connect(self._on_finished)

    def cancel(self) -> None:
        if not self._done:
            self._cancelled = True
            self._reply.abort()  # closing the connection is how an OpenAI server is told to stop

    def _on_ready_read(self) -> None:
        if self._reply.attribute(QNetworkRequest.Attribute.HttpStatusCodeAttribute) not in (None, 200):
            return  # an error body: read whole in _on_finished
        for data in self._events.feed(bytes(self._reply.readAll().data())):
            self._on_event(data)

    def _on_event(self, data: str) -> None:
        if data == "[DONE]":
            return
        chunk = parse_chunk(data)
        if chunk.error is not None:
            self._error = chunk.error
            return
        if chunk.usage is not None:
            self._usage = chunk.usage
        if chunk.text:
            now = time.perf_counter()
            if self._first_at is None:
                self._first_at = now
            self._last_at = now
            self.text += chunk.text
            self.sig_delta.emit(chunk.text)
        if chunk.finish_reason is not None:
            self._finish_reason = chunk.finish_reason

    def _on_finished(self) -> None:
        if self._done:
            return
        self._done = True
        reply = self._reply
        if self._cancelled:
            self.sig_finished.emit(self.text, "cancelled", self.stats())
        elif reply.error() != QNetworkReply.NetworkError.NoError:
            self.sig_failed.emit(error_message(reply, bytes(reply.readAll().data())))
        elif self._error is not None:
            self.sig_failed.emit(self._error)
        else:
            self._on_ready_read()  # anything that came with the end
            self.sig_finished.emit(self.text, self._finish_reason, self.stats())
        reply.deleteLater()

    def stats(self) -> GenerationStats:
        """What the client measured; a figure it could not measure stays 0 (not known), never guessed."""
        now = time.perf_counter()
        stats = GenerationStats(total_ms=(now - self._sent_at) * 1000)
        if self._first_at is not None:
            stats.ttft_ms = (self._first_at - self._sent_at) * 1000
        usage = self._usage or Usage()
        if usage.completion_tokens is not None:
            stats.completion_tokens = usage.completion_tokens
            span = (self._last_at or now) - (self._first_at or now)
            if usage.completion_tokens > 1 and span > 0:
                stats.decode_tokens_per_s = (usage.completion_tokens - 1) / span
        if usage.prompt_tokens is not None:
            stats.prompt_tokens = usage.prompt_tokens
        if usage.cached_tokens is not None:
            stats.prompt_tokens_reused = usage.cached_tokens
            if usage.prompt_tokens is not None:
                stats.prompt_tokens_evaluated = usage.prompt_tokens - usage.cached_tokens
        return stats


def shared_network() -> QNetworkAccessManager:
    """One manager for the whole application, as Qt advises, owned by the application object.

    Replies stay children of the manager and are freed with deleteLater: a reply
    (or manager) deleted outright just after `finished`, while Qt's HTTP code still
    has events queued for it, aborts the process ("pure virtual method called");
    tests/remote caught that when a short-lived client owned them.
    """
    app = QCoreApplication.instance()
    assert app is not None, "the remote client needs the application object"
    network = app.findChild(QNetworkAccessManager, "lokal-remote-network")
    if network is None:
        network = QNetworkAccessManager(app)
        network.setObjectName("lokal-remote-network")
        network.setRedirectPolicy(REDIRECTS)  # each request sets it too (_request); this covers any other
    return network


class RemoteClient(QObject):
    """Lists an endpoint's models and starts chat replies on it."""

    sig_models = Signal(object, list)  # Endpoint, model ids
    sig_models_failed = Signal(object, str)  # Endpoint, message

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.network = shared_network()

    def list_models(self, endpoint: Endpoint, key: str) -> None:
        reply = self.network.get(_request(endpoint, key, "/models", MODELS_TIMEOUT_MS))
        reply.finished.connect(lambda: self._on_models(endpoint, reply))

    def _on_models(self, endpoint: Endpoint, reply: QNetworkReply) -> None:
        body = bytes(reply.readAll().data())
        reply.deleteLater()
        if reply.error() != QNetworkReply.NetworkError.NoError:
            self.sig_models_failed.emit(endpoint, error_message(reply, body))
            return
        try:
            ids = [str(m["id"]) for m in json.loads(body)["data"]]
        except (ValueError, KeyError, TypeError):
            self.sig_models_failed.emit(endpoint, "the server's model list is not in the OpenAI format")
            return
        self.sig_models.emit(endpoint, ids)

    def chat(self, endpoint: Endpoint, key: str, model: str, messages: list[dict[str, str]], max_tokens: int | None = None, temperature: float | None = None, top_p: float | None = None, seed: int | None = None) -> RemoteReply:
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": True, "stream_options": {"include_usage": True}}
        for name, value in (("max_tokens", max_tokens), ("temperature", temperature), ("top_p", top_p), ("seed", seed)):
            if value is not None:
                body[name] = value
        request = _request(endpoint, key, "/chat/completions", CHAT_TIMEOUT_MS)
        request.setRawHeader(b"Accept", b"text/event-stream")
        reply = self.network.post(request, QByteArray(json.dumps(body).encode("utf-8")))
        return RemoteReply(reply, self)
