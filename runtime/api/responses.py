"""The JSON shapes of OpenAI's chat.completion / text_completion objects and their streamed chunks."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, Sequence

from runtime.protocol import ChatGenerateResult, GenerationStats, TokenChoice, TokenLogprob, ToolCall

FINGERPRINT = "lokal"


def new_id(kind: str) -> str:
    return f"{kind}-{secrets.token_hex(12)}"


def usage(stats: GenerationStats) -> dict[str, Any]:
    return {
        "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens,
        "total_tokens": stats.prompt_tokens + stats.completion_tokens,
        # OpenAI's field for prompt tokens served from a cache: here, the KV prefix the runtime kept.
        "prompt_tokens_details": {"cached_tokens": stats.prompt_tokens_reused + stats.prompt_tokens_restored},
        # OpenAI's field for the completion tokens spent thinking (runtime/reasoning); the rest are the answer's.
        "completion_tokens_details": {"reasoning_tokens": stats.reasoning_tokens},
    }


def finish_reason(result: ChatGenerateResult) -> str:
    # "cancelled" only happens when the caller hung up, and then nobody reads it; OpenAI knows "stop", "length", "tool_calls".
    return result.finish_reason if result.finish_reason in ("stop", "length", "tool_calls") else "stop"


def tool_call_object(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def _choice_object(choice: TokenChoice) -> dict[str, Any]:
    return {"token": choice.text, "logprob": choice.logprob, "bytes": choice.bytes}


class Shapes:
    """Builds the objects of one response: one id and creation time across all its chunks.

    With `logprobs`, each choice carries its tokens' log-probabilities in the endpoint's shape: chat's
    `content` list, or the legacy completion's parallel lists. A stream sends them with the text they
    belong to (they arrive just before it: `hold`), or with the last chunk.
    """

    def __init__(self, chat: bool, model: str, logprobs: bool = False, prompt: str = "", echo: bool = False):
        self.chat = chat
        self.model = model
        self.logprobs = logprobs
        self.id = new_id("chatcmpl" if chat else "cmpl")
        self.created = int(time.time())
        self.calls_sent = 0  # tool calls streamed so far: each has its index
        self._held: list[TokenLogprob] = []
        # The legacy completion's `echo`: its text begins with the prompt, and so do its log-probabilities.
        self.echo = prompt if echo else None
        # The legacy shape's offsets count from the prompt's start, the completion following it (as llama-cpp-python's do).
        self._text_offset = 0 if echo else len(prompt)

    def hold(self, entries: Sequence[TokenLogprob]) -> None:
        """Log-probabilities for the next chunk that carries text."""
        self._held.extend(entries)

    def _logprobs_object(self, entries: Sequence[TokenLogprob], unscored: str = "") -> dict[str, Any] | None:
        """`unscored`: the echoed prompt's text before its first scored token (its first token, which has nothing
        before it: null, as OpenAI gives it); "" when the model's BOS opened the prompt and every text token is scored."""
        if not self.logprobs:
            return None
        if self.chat:
            return {"content": [{**_choice_object(e), "top_logprobs": [_choice_object(t) for t in e.top]} for e in entries], "refusal": None}
        tokens: list[str] = [unscored] if unscored else []
        token_logprobs: list[float | None] = [None] if unscored else []
        top_logprobs: list[dict[str, float] | None] = [None] if unscored else []
        tokens += [e.text for e in entries]
        token_logprobs += [e.logprob for e in entries]
        top_logprobs += [{t.text: t.logprob for t in e.top} for e in entries]
        offsets = []
        for text in tokens:
            offsets.append(self._text_offset)
            self._text_offset += len(text)
        return {"tokens": tokens, "token_logprobs": token_logprobs, "top_logprobs": top_logprobs, "text_offset": offsets}

    def _held_object(self) -> dict[str, Any] | None:
        if not self._held:
            return None
        held, self._held = self._held, []
        return self._logprobs_object(held)

    def _envelope(self, object_: str, choices: list, **extra) -> dict[str, Any]:
        return {"id": self.id, "object": object_, "created": self.created, "model": self.model, "system_fingerprint": FINGERPRINT, "choices": choices, **extra}

    def complete(self, result: ChatGenerateResult) -> dict[str, Any]:
        reason = finish_reason(result)
        if self.chat:
            message: dict[str, Any] = {"role": "assistant", "content": result.text}
            if result.reasoning:
                message["reasoning_content"] = result.reasoning  # llama-server's and DeepSeek's name
            if result.tool_calls:
                message["content"] = result.text or None
                message["tool_calls"] = [tool_call_object(c) for c in result.tool_calls]
            choice = {"index": 0, "message": message, "finish_reason": reason, "logprobs": self._logprobs_object(result.logprobs)}
            return self._envelope("chat.completion", [choice], usage=usage(result.stats))
        if self.echo is None:
            choice = {"index": 0, "text": result.text, "finish_reason": reason, "logprobs": self._logprobs_object(result.logprobs)}
        else:
            scored = result.prompt_logprobs
            echoed = self._logprobs_object([*scored, *result.logprobs], unscored_text(self.echo, scored))
            choice = {"index": 0, "text": self.echo + result.text, "finish_reason": reason, "logprobs": echoed}
        return self._envelope("text_completion", [choice], usage=usage(result.stats))

    def _chunk(self, delta_or_text: Any, reason: str | None, logprobs: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.chat:
            return self._envelope("chat.completion.chunk", [{"index": 0, "delta": delta_or_text, "finish_reason": reason, "logprobs": logprobs}])
        return self._envelope("text_completion", [{"index": 0, "text": delta_or_text, "finish_reason": reason, "logprobs": logprobs}])

    def first_chunk(self) -> dict[str, Any] | None:
        if self.chat:
            return self._chunk({"role": "assistant", "content": ""}, None)
        return self._chunk(self.echo, None) if self.echo else None  # echo streamed: the prompt first (schema: no logprobs)

    def text_chunk(self, text: str) -> dict[str, Any]:
        return self._chunk({"content": text} if self.chat else text, None, self._held_object())

    def reasoning_chunk(self, text: str) -> dict[str, Any]:
        return self._chunk({"reasoning_content": text}, None)

    def tool_call_chunks(self, call: ToolCall) -> list[dict[str, Any]]:
        """A call as OpenAI streams one: its id and name first, then its arguments."""
        index, self.calls_sent = self.calls_sent, self.calls_sent + 1
        head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        return [self._chunk({"tool_calls": [head]}, None, self._held_object()), self._chunk({"tool_calls": [{"index": index, "function": {"arguments": call.arguments}}]}, None)]

    def last_chunk(self, result: ChatGenerateResult, called: bool = False) -> dict[str, Any]:
        reason = "tool_calls" if called and result.finish_reason != "length" else finish_reason(result)
        if not called and reason == "tool_calls":
            reason = "stop"  # the engine found a call the stream showed as text: the stream is what the caller has
        return self._chunk({} if self.chat else "", reason, self._held_object())

    def usage_chunk(self, result: ChatGenerateResult) -> dict[str, Any]:
        return self._envelope("chat.completion.chunk" if self.chat else "text_completion", [], usage=usage(result.stats))


def unscored_text(prompt: str, scored: Sequence[TokenLogprob]) -> str:
    """The prompt's text before its scored tokens: its first token's, or "" when a BOS token came first."""
    spelled = "".join(e.text for e in scored)
    return prompt[: len(prompt) - len(spelled)] if prompt.endswith(spelled) else ""


def sse(data: Any) -> bytes:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"data: {payload}\n\n".encode("utf-8")


SSE_DONE = sse("[DONE]")
