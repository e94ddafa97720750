"""RemoteChatLink: a remote model behind the same calls the chat uses on the runtime link.

The window's ChatController speaks to its link with call(methods.CHAT_GENERATE,
ChatGenerateParams, on_result, on_error), cancel(call) and the
sig_delta(request_id, text) signal. This class answers exactly those for a
model on an OpenAI-compatible endpoint, with the same ChatGenerateResult (its
stats are what the client measured; the others stay 0), so a conversation
streams, stops, is saved and shows its figures the same way whether the model
runs here or on a cluster.
"""

from __future__ import annotations

import itertools
import typing
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from app.remote.client import RemoteClient, RemoteReply
from app.remote.endpoint_model import RemoteModel
from runtime import protocol
from runtime.protocol import ChatGenerateParams, ChatGenerateResult, ErrorCode, FinishReason, GenerationStats, Method, RpcError, methods


class RemoteCall:
    def __init__(self, request_id: str, method: Method[Any, Any], on_result: Callable[[ChatGenerateResult], None] | None, on_error: Callable[[RpcError], None] | None):
        self.id = request_id
        self.method = method
        self.on_result = on_result
        self.on_error = on_error
        self.reply: RemoteReply | None = None
        self.done = False


class RemoteChatLink(QObject):
    sig_delta = Signal(object, str)  # request id, text (as RuntimeLink's)
    sig_reasoning_delta = Signal(object, str)  # as RuntimeLink's; a remote endpoint's reasoning is not read yet, so never emitted

    def __init__(self, client: RemoteClient, key_for: Callable[[RemoteModel], str], parent: QObject | None = None):
        super().__init__(parent)
        self.client = client
        self.key_for = key_for
        self.model: RemoteModel | None = None
        self._ids = itertools.count(1)

    def call(
        self,
        method: Method[ChatGenerateParams, ChatGenerateResult],
        params: ChatGenerateParams | None = None,
        on_result: Callable[[ChatGenerateResult], None] | None = None,
        on_error: Callable[[RpcError], None] | None = None,
        timeout_ms: int | None = None,
    ) -> RemoteCall:
        """RuntimeLink.call for the one method a remote endpoint answers; mypy refuses any other handle here."""
        call = RemoteCall(f"remote-{next(self._ids)}", method, on_result, on_error)
        if method != methods.CHAT_GENERATE:
            self._fail(call, RpcError(ErrorCode.METHOD_NOT_FOUND, f"a remote endpoint does not do {method.name}"))
            return call
        params = protocol.params_for(methods.CHAT_GENERATE, params)
        if self.model is None:
            self._fail(call, RpcError(ErrorCode.NO_MODEL_LOADED, "no remote model is chosen"))
            return call
        messages = [{"role": m.role, "content": m.content} for m in params.messages]
        reply = self.client.chat(self.model.endpoint, self.key_for(self.model), self.model.model_id, messages, max_tokens=params.max_tokens, temperature=params.temperature, top_p=params.top_p, seed=params.seed)
        call.reply = reply
        reply.sig_delta.connect(lambda text, c=call: self.sig_delta.emit(c.id, text))
        reply.sig_finished.connect(lambda text, reason, stats, c=call, p=params: self._on_finished(c, p, text, reason, stats))
        reply.sig_failed.connect(lambda message, c=call: self._fail(c, RpcError(ErrorCode.REMOTE_FAILED, f"{self.model.endpoint.name if self.model else 'remote'}: {message}")))
        return call

    def cancel(self, call: RemoteCall) -> None:
        if not call.done and call.reply is not None:
            call.reply.cancel()

    def _on_finished(self, call: RemoteCall, params: ChatGenerateParams, text: str, reason: str, stats: GenerationStats) -> None:
        if call.done:
            return
        if reason not in typing.get_args(FinishReason):
            self._fail(call, RpcError(ErrorCode.REMOTE_FAILED, f"the endpoint ended the reply with finish_reason {reason!r}"))
            return
        call.done = True
        if call.on_result is not None:
            call.on_result(ChatGenerateResult(call.id, params.conversation_id, text, typing.cast(FinishReason, reason), stats))

    def _fail(self, call: RemoteCall, error: RpcError) -> None:
        if call.done:
            return
        call.done = True
        if call.on_error is not None:
            call.on_error(error)
