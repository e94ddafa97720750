"""The JSON shapes of OpenAI's chat.completion / text_completion objects and their streamed chunks."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Sequence

from runtime.protocol import ChatGenerateResult, TokenChoice, TokenLogprob, ToolCall

FINGERPRINT = "lokal"


def new_id(kind: str) -> str:
    return f"{kind}-{secrets.token_hex(12)}"


def usage(results: Sequence[ChatGenerateResult], n: int = 1) -> dict[str, Any]:
    """One request's usage: each prompt once (its `n` choices read the same), the choices' completions added up."""
    prompts = [r.stats for r in results[::n]]
    read = sum(p.prompt_tokens for p in prompts)
    completion = sum(r.stats.completion_tokens for r in results)
    return {
        "prompt_tokens": read,
        "completion_tokens": completion,
        "total_tokens": read + completion,
        # OpenAI's field for prompt tokens served from a cache: here, the KV prefix the runtime kept.
        "prompt_tokens_details": {"cached_tokens": sum(p.prompt_tokens_reused + p.prompt_tokens_restored for p in prompts)},
        # OpenAI's field for the completion tokens spent thinking (runtime/reasoning); the rest are the answer's.
        "completion_tokens_details": {"reasoning_tokens": sum(r.stats.reasoning_tokens for r in results)},
    }


def finish_reason(result: ChatGenerateResult) -> str:
    # "cancelled" only happens when the caller hung up, and then nobody reads it; OpenAI knows "stop", "length", "tool_calls".
    return result.finish_reason if result.finish_reason in ("stop", "length", "tool_calls") else "stop"


def tool_call_object(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def _choice_object(choice: TokenChoice) -> dict[str, Any]:
    return {"token": choice.text, "logprob": choice.logprob, "bytes": choice.bytes}


@dataclass(frozen=True)
class RawPrompt:
    """A legacy completion's prompt, as its choices echo it and count their text offsets from it."""

    text: str
    # Given as token ids: its first token's text (llama.cpp writes every token as some text). An echo lists it,
    # unscored (null), then the others: one entry per id sent, as evaluation tools count them.
    first_token: str | None = None


class Shapes:
    """Builds the objects of one response: one id and creation time across all its chunks and choices.

    With `logprobs`, each choice carries its tokens' log-probabilities in the endpoint's shape: chat's
    `content` list, or the legacy completion's parallel lists. A stream sends them with the text they
    belong to (they arrive just before it: `hold`), or with the choice's last chunk. What a stream has
    sent so far (tool calls, log-probabilities held, text offsets) is kept per choice (`index`). A legacy
    completion may have several prompts, each with `n` choices: choice `index` is prompt `index // n`'s.
    """

    def __init__(self, chat: bool, model: str, logprobs: bool = False, prompts: Sequence[RawPrompt] = (), echo: bool = False, n: int = 1):
        self.chat = chat
        self.model = model
        self.logprobs = logprobs
        self.n = n
        self.id = new_id("chatcmpl" if chat else "cmpl")
        self.created = int(time.time())
        self._calls_sent: dict[int, int] = {}  # tool calls streamed so far per choice: each has its index
        self._held: dict[int, list[TokenLogprob]] = {}
        self._prompts = list(prompts)
        # The legacy completion's `echo`: its text begins with the prompt, and so do its log-probabilities.
        self.echo = echo
        self._text_offsets: dict[int, int] = {}

    def _prompt(self, index: int) -> RawPrompt:
        return self._prompts[index // self.n] if self._prompts else RawPrompt("")

    def _first_offset(self, index: int) -> int:
        # The legacy shape's offsets count from the prompt's start, the completion following it (as llama-cpp-python's do).
        return 0 if self.echo else len(self._prompt(index).text)

    def calls_sent(self, index: int = 0) -> int:
        return self._calls_sent.get(index, 0)

    def hold(self, entries: Sequence[TokenLogprob], index: int = 0) -> None:
        """Log-probabilities for the choice's next chunk that carries text."""
        if entries:
            self._held.setdefault(index, []).extend(entries)

    def _logprobs_object(self, entries: Sequence[TokenLogprob], index: int = 0, unscored: str = "") -> dict[str, Any] | None:
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
        offset = self._text_offsets.get(index, self._first_offset(index))
        for text in tokens:
            offsets.append(offset)
            offset += len(text)
        self._text_offsets[index] = offset
        return {"tokens": tokens, "token_logprobs": token_logprobs, "top_logprobs": top_logprobs, "text_offset": offsets}

    def _held_object(self, index: int) -> dict[str, Any] | None:
        held = self._held.pop(index, None)
        return self._logprobs_object(held, index) if held else None

    def _envelope(self, object_: str, choices: list, **extra) -> dict[str, Any]:
        return {"id": self.id, "object": object_, "created": self.created, "model": self.model, "system_fingerprint": FINGERPRINT, "choices": choices, **extra}

    def complete(self, results: Sequence[ChatGenerateResult]) -> dict[str, Any]:
        """The whole response: one choice per result, in order."""
        choices = [self._whole_choice(result, index) for index, result in enumerate(results)]
        return self._envelope("chat.completion" if self.chat else "text_completion", choices, usage=usage(results, self.n))

    def _whole_choice(self, result: ChatGenerateResult, index: int) -> dict[str, Any]:
        reason = finish_reason(result)
        if self.chat:
            message: dict[str, Any] = {"role": "assistant", "content": result.text}
            if result.reasoning:
                message["reasoning_content"] = result.reasoning  # llama-server's and DeepSeek's name
            if result.tool_calls:
                message["content"] = result.text or None
                message["tool_calls"] = [tool_call_object(c) for c in result.tool_calls]
            return {"index": index, "message": message, "finish_reason": reason, "logprobs": self._logprobs_object(result.logprobs, index)}
        if not self.echo:
            return {"index": index, "text": result.text, "finish_reason": reason, "logprobs": self._logprobs_object(result.logprobs, index)}
        prompt, scored = self._prompt(index), result.prompt_logprobs
        first = prompt.first_token if prompt.first_token is not None else unscored_text(prompt.text, scored)
        echoed = self._logprobs_object([*scored, *result.logprobs], index, first)
        return {"index": index, "text": prompt.text + result.text, "finish_reason": reason, "logprobs": echoed}

    def _chunk(self, delta_or_text: Any, reason: str | None, index: int, logprobs: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.chat:
            return self._envelope("chat.completion.chunk", [{"index": index, "delta": delta_or_text, "finish_reason": reason, "logprobs": logprobs}])
        return self._envelope("text_completion", [{"index": index, "text": delta_or_text, "finish_reason": reason, "logprobs": logprobs}])

    def first_chunk(self, index: int = 0) -> dict[str, Any] | None:
        if self.chat:
            return self._chunk({"role": "assistant", "content": ""}, None, index)
        text = self._prompt(index).text
        return self._chunk(text, None, index) if self.echo and text else None  # echo streamed: the prompt first (schema: no logprobs)

    def text_chunk(self, text: str, index: int = 0) -> dict[str, Any]:
        return self._chunk({"content": text} if self.chat else text, None, index, self._held_object(index))

    def reasoning_chunk(self, text: str, index: int = 0) -> dict[str, Any]:
        return self._chunk({"reasoning_content": text}, None, index)

    def tool_call_chunks(self, call: ToolCall, index: int = 0) -> list[dict[str, Any]]:
        """A call as OpenAI streams one: its id and name first, then its arguments."""
        number = self._calls_sent.get(index, 0)
        self._calls_sent[index] = number + 1
        head = {"index": number, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        arguments = {"index": number, "function": {"arguments": call.arguments}}
        return [self._chunk({"tool_calls": [head]}, None, index, self._held_object(index)), self._chunk({"tool_calls": [arguments]}, None, index)]

    def last_chunk(self, result: ChatGenerateResult, index: int = 0) -> dict[str, Any]:
        called = self.calls_sent(index) > 0
        reason = "tool_calls" if called and result.finish_reason != "length" else finish_reason(result)
        if not called and reason == "tool_calls":
            reason = "stop"  # the engine found a call the stream showed as text: the stream is what the caller has
        return self._chunk({} if self.chat else "", reason, index, self._held_object(index))

    def usage_chunk(self, results: Sequence[ChatGenerateResult]) -> dict[str, Any]:
        return self._envelope("chat.completion.chunk" if self.chat else "text_completion", [], usage=usage(results, self.n))


def unscored_text(prompt: str, scored: Sequence[TokenLogprob]) -> str:
    """The prompt's text before its scored tokens: its first token's, or "" when a BOS token came first.
    Compared as bytes: tokens that split a character between them each spell only part of it."""
    spelled = b"".join(bytes(e.bytes) for e in scored)
    whole = prompt.encode("utf-8")
    return whole[: len(whole) - len(spelled)].decode("utf-8", "replace") if whole.endswith(spelled) else ""


def sse(data: Any) -> bytes:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"data: {payload}\n\n".encode("utf-8")


SSE_DONE = sse("[DONE]")
