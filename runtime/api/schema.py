"""Request bodies of the endpoints, validated with pydantic in strict mode.

Strict: "5" is not a number and 1 is not a bool, as in OpenAI's own API. A field
this server does not know is refused with a 400 naming it, as OpenAI refuses
one: silently dropping it would answer a request the caller did not make. The
fields that cannot change the reply (`user`, `store`, `metadata`, ...) are
accepted; those that would and are not supported are refused by name.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional, TypeVar, Union, cast

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from runtime.api.errors import ApiError, bad_request
from runtime.protocol import MAX_TOP_LOGPROBS, Role

Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]

# OpenAI allows up to 4 stop sequences.
MAX_STOP = 4
MAX_CHOICES = 128  # OpenAI's limit for n


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    def check_supported(self) -> None:
        """A 400 naming what a body of valid fields asks for that this server does not do (nothing, unless a request says)."""


class TextPart(_Body):
    type: Literal["text"]
    text: StrictStr


class FileData(_Body):
    filename: Optional[StrictStr] = None
    file_data: Optional[StrictStr] = None  # base64, or a data URL (data:application/pdf;base64,...), as OpenAI sends it
    file_id: Optional[StrictStr] = None  # OpenAI's uploaded files: this server has none (refused by name)


class FilePart(_Body):
    """A document in a user turn (OpenAI's `file` part): it takes the window's path, whole or retrieved (runtime/documents)."""

    type: Literal["file"]
    file: FileData


class ImageUrl(_Body):
    url: StrictStr  # a data URL, or http(s) where the server allows it (runtime/api/images.py)
    detail: Optional[Literal["auto", "low", "high"]] = None  # accepted; the projector decides the resolution


class ImageUrlPart(_Body):
    type: Literal["image_url"]
    image_url: ImageUrl


ContentPart = Annotated[Union[TextPart, FilePart, ImageUrlPart], Field(discriminator="type")]


class FunctionCall(_Body):
    name: StrictStr
    arguments: StrictStr  # JSON text, as OpenAI sends it


class ToolCallIn(_Body):
    id: StrictStr
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(_Body):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[None, StrictStr, list[ContentPart]] = None  # None: an assistant turn that only called tools
    name: Optional[StrictStr] = None
    tool_calls: Optional[list[ToolCallIn]] = None  # assistant
    tool_call_id: Optional[StrictStr] = None  # tool
    # An assistant turn's reasoning, as llama-server and DeepSeek's API return it: given to templates that render
    # it (most drop it; runtime/reasoning).
    reasoning_content: Optional[StrictStr] = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    def files(self) -> list[FilePart]:
        return [part for part in self.content if isinstance(part, FilePart)] if isinstance(self.content, list) else []
    def image_urls(self) -> list[tuple[int, str]]:
        """The image_url parts' URLs, with their index in `content`."""
        if not isinstance(self.content, list):
            return []
        return [(i, part.image_url.url) for i, part in enumerate(self.content) if isinstance(part, ImageUrlPart)]

    def runtime_role(self) -> Role:
        return "system" if self.role == "developer" else self.role  # "developer" is OpenAI's newer name for system


class ChatTemplateKwargs(_Body):
    """The template switches this server knows (llama-server's chat_template_kwargs): any other is refused by name."""

    enable_thinking: Optional[StrictBool] = None  # Qwen3, SmolLM3
    reasoning_effort: Optional[Literal["low", "medium", "high"]] = None  # gpt-oss


class StreamOptions(_Body):
    include_usage: StrictBool = False


class FunctionSpec(_Body):
    name: StrictStr = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    description: Optional[StrictStr] = None
    parameters: Optional[dict[str, Any]] = None
    strict: Optional[StrictBool] = None  # with a grammar every required call validates anyway


class Tool(_Body):
    type: Literal["function"]
    function: FunctionSpec


class NamedFunction(_Body):
    name: StrictStr


class NamedToolChoice(_Body):
    type: Literal["function"]
    function: NamedFunction


class JsonSchemaFormat(_Body):
    name: StrictStr = "response"
    description: Optional[StrictStr] = None
    schema_: Optional[dict[str, Any]] = Field(None, alias="schema")
    strict: Optional[StrictBool] = None


class ResponseFormat(_Body):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: Optional[JsonSchemaFormat] = None


# llama-server's names for what the runtime calls repeat_penalty / penalty_last_n.
PENALTY = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-2.0, le=2.0)]
SEED_RANGE = 1 << 64  # any integer seed is taken modulo this (llama.cpp clients send -1)
INT32_MAX = 2**31 - 1  # what llama.cpp takes for a count (ctypes drops the higher bits without a word)
TOKEN_ID = re.compile(r"-?[0-9]{1,10}")  # a logit_bias key: past 10 digits no vocabulary has it


class _Sampling(_Body):
    model: StrictStr
    max_tokens: Optional[StrictInt] = Field(None, ge=0)
    temperature: Optional[Number] = Field(None, ge=0.0, le=2.0)
    top_p: Optional[Number] = Field(None, gt=0.0, le=1.0)
    top_k: Optional[StrictInt] = Field(None, ge=0, le=INT32_MAX)  # llama.cpp's server accepts it too
    min_p: Optional[Number] = Field(None, ge=0.0, le=1.0)
    typical_p: Optional[Number] = Field(None, gt=0.0, le=1.0)
    repeat_penalty: Optional[Number] = Field(None, gt=0.0, le=10.0)
    repeat_last_n: Optional[StrictInt] = Field(None, ge=-1)
    frequency_penalty: Optional[PENALTY] = None
    presence_penalty: Optional[PENALTY] = None
    dry_multiplier: Optional[Number] = Field(None, ge=0.0)
    dry_base: Optional[Number] = Field(None, ge=1.0)
    dry_allowed_length: Optional[StrictInt] = Field(None, ge=0, le=INT32_MAX)
    dry_penalty_last_n: Optional[StrictInt] = Field(None, ge=-1)
    logit_bias: Optional[dict[str, Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-100.0, le=100.0)]]] = None
    grammar: Optional[StrictStr] = None  # GBNF, as llama-server takes it
    seed: Optional[StrictInt] = None
    stop: Union[None, StrictStr, list[StrictStr]] = None
    stream: StrictBool = False
    stream_options: Optional[StreamOptions] = None
    n: Optional[StrictInt] = Field(None, ge=1, le=MAX_CHOICES)  # choices: the server's own bound is its streams and queue (backend.py)
    logprobs: Optional[Union[StrictBool, StrictInt]] = None
    top_logprobs: Optional[StrictInt] = None
    # Accepted because they cannot change the reply: who asked, whether to keep it, tags, the prompt cache (always on).
    user: Optional[StrictStr] = None
    store: Optional[StrictBool] = None
    metadata: Optional[dict[str, Any]] = None
    service_tier: Optional[StrictStr] = None
    cache_prompt: Optional[StrictBool] = None

    def requested_max_tokens(self) -> int | None:
        return self.max_tokens

    def seed_in_range(self) -> int | None:
        return None if self.seed is None else self.seed % SEED_RANGE

    def logit_biases(self) -> list[tuple[int, float]]:
        biases = []
        for key, bias in (self.logit_bias or {}).items():
            # ASCII digits only: str.isdigit() also takes "²" and "١", which int() then refuses (or reads).
            if not TOKEN_ID.fullmatch(key):
                shown = key if len(key) <= 20 else key[:17] + "..."
                raise bad_request(f"logit_bias: keys are token ids (plain decimal numbers), not {shown!r}", param="logit_bias")
            biases.append((int(key), bias))
        return biases

    def check_windows(self, n_ctx: int) -> None:
        """The penalty windows, no wider than the context: llama.cpp allocates a window whole, before it holds a token."""
        for name in ("repeat_last_n", "dry_penalty_last_n"):
            value = getattr(self, name)
            if value is not None and value > n_ctx:
                raise bad_request(f"{name}: must be at most the context size ({n_ctx}), or -1 for the whole context", param=name)

    def stop_list(self) -> list[str]:
        if self.stop is None:
            return []
        stops = [self.stop] if isinstance(self.stop, str) else list(self.stop)
        if len(stops) > MAX_STOP:
            raise bad_request(f"stop: at most {MAX_STOP} sequences are allowed", param="stop")
        return [s for s in stops if s]

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)

    def check_supported(self) -> None:
        self.alternatives()  # refuses logprobs in the other endpoint's form, or beyond the limit

    def alternatives(self) -> int | None:
        """Alternatives per token to report with each token's log-probability; None: no log-probabilities."""
        raise NotImplementedError


def _within_top_limit(name: str, value: int) -> int:
    if not 0 <= value <= MAX_TOP_LOGPROBS:
        raise bad_request(f"{name}: must be 0 to {MAX_TOP_LOGPROBS} (the most likely tokens reported at each position)", param=name)
    return value


class ChatCompletionRequest(_Sampling):
    messages: list[Message] = Field(min_length=1)
    max_completion_tokens: Optional[StrictInt] = Field(None, ge=0)  # OpenAI's newer name for max_tokens
    response_format: Optional[ResponseFormat] = None
    tools: Optional[list[Tool]] = None
    tool_choice: Union[None, Literal["auto", "none", "required"], NamedToolChoice] = None
    parallel_tool_calls: Optional[StrictBool] = None
    # Reasoning (runtime/reasoning), as llama-server takes them: how it is split from the answer, the effort and
    # the template's switches, and a budget of thinking tokens (-1: unlimited, 0: no thinking).
    reasoning_format: Optional[Literal["none", "auto", "deepseek"]] = None
    reasoning_effort: Optional[Literal["low", "medium", "high"]] = None
    chat_template_kwargs: Optional[ChatTemplateKwargs] = None
    reasoning_budget: Optional[StrictInt] = Field(None, ge=-1, le=INT32_MAX)

    def effort(self) -> Literal["low", "medium", "high"] | None:
        kwargs = self.chat_template_kwargs
        return self.reasoning_effort or (kwargs.reasoning_effort if kwargs is not None else None)

    def enable_thinking(self) -> bool | None:
        return self.chat_template_kwargs.enable_thinking if self.chat_template_kwargs is not None else None

    def requested_max_tokens(self) -> int | None:
        return self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens

    def alternatives(self) -> int | None:
        # OpenAI's chat shape: logprobs true, and top_logprobs alternatives (0 when left out).
        if isinstance(self.logprobs, int) and not isinstance(self.logprobs, bool):
            raise bad_request("logprobs: must be true or false here (top_logprobs says how many alternatives)", param="logprobs")
        if not self.logprobs:
            if self.top_logprobs is not None:
                raise bad_request("top_logprobs: needs logprobs set to true", param="top_logprobs")
            return None
        return _within_top_limit("top_logprobs", self.top_logprobs or 0)

    def check_supported(self) -> None:
        super().check_supported()
        if self.parallel_tool_calls is False:
            raise bad_request("parallel_tool_calls: false is not supported by this server (a reply may call several tools)", param="parallel_tool_calls")
        fmt = self.response_format
        if fmt is not None and fmt.type == "json_schema" and (fmt.json_schema is None or fmt.json_schema.schema_ is None):
            raise bad_request("response_format.json_schema.schema: a json_schema response format needs its schema", param="response_format.json_schema.schema")
        if fmt is not None and fmt.type != "text" and self.grammar is not None:
            raise bad_request("grammar: give either a grammar or a response_format, not both", param="grammar")
        for i, message in enumerate(self.messages):
            if message.reasoning_content is not None and message.role != "assistant":
                raise bad_request(f"messages[{i}].reasoning_content: only an assistant message carries reasoning (this one is {message.role!r})", param=f"messages.{i}.reasoning_content")
        names = [tool.function.name for tool in self.tools or []]
        if len(set(names)) != len(names):
            raise bad_request("tools: two tools have the same name", param="tools")
        choice = self.tool_choice
        if isinstance(choice, NamedToolChoice) and choice.function.name not in names:
            raise bad_request(f"tool_choice: {choice.function.name!r} is not one of the tools", param="tool_choice")
        if choice == "required" and not names:
            raise bad_request("tool_choice: 'required' needs tools", param="tool_choice")
        if (choice == "required" or isinstance(choice, NamedToolChoice)) and (self.grammar is not None or (fmt is not None and fmt.type != "text")):
            raise bad_request("tool_choice: a required tool call cannot be combined with a grammar or a response_format", param="tool_choice")


class CompletionRequest(_Sampling):
    # Text, or token ids (as evaluation tools send them); a list of several asks for each one's choices.
    prompt: Union[StrictStr, list[StrictStr], list[StrictInt], list[list[StrictInt]]]
    echo: StrictBool = False
    suffix: Optional[StrictStr] = None

    def prompts(self) -> list[str | list[int]]:
        """The prompts asked for, each text or token ids: ApiError 400 naming an empty one."""
        prompt = self.prompt
        several = not isinstance(prompt, str) and not (prompt and isinstance(prompt[0], int))
        prompts = cast("list[str | list[int]]", list(prompt) if several else [prompt])
        if not prompts:
            raise bad_request("prompt: must not be an empty list", param="prompt")
        for i, one in enumerate(prompts):
            if not one:
                where = f"prompt[{i}]" if several else "prompt"
                raise bad_request(f"{where}: must not be empty", param=where)
        return prompts

    def alternatives(self) -> int | None:
        # The legacy shape: logprobs is the number of alternatives itself (0: the chosen tokens' only).
        if self.top_logprobs is not None:
            raise bad_request("top_logprobs: not a /v1/completions field (logprobs: N reports N alternatives)", param="top_logprobs")
        if isinstance(self.logprobs, bool):
            raise bad_request(f"logprobs: must be a number of alternatives, 0 to {MAX_TOP_LOGPROBS}, here (true and false are /v1/chat/completions' form)", param="logprobs")
        return None if self.logprobs is None else _within_top_limit("logprobs", self.logprobs)

    def check_supported(self) -> None:
        super().check_supported()
        if self.echo and self.stream and self.logprobs is not None:
            raise bad_request("echo: with logprobs the reply is answered whole, not streamed (set stream to false)", param="echo")
        if self.suffix:
            raise bad_request("suffix (fill-in-the-middle) is not supported by this server", param="suffix")


Request = TypeVar("Request", bound=_Body)


def parse(cls: type[Request], data: object) -> Request:
    """Validate a decoded JSON body; ApiError 400 naming the first bad field."""
    if cls is CompletionRequest and isinstance(data, dict):
        for name in ("response_format", "tools", "tool_choice", "reasoning_format", "reasoning_effort", "chat_template_kwargs", "reasoning_budget"):
            if name in data:
                raise bad_request(f"{name}: not supported by /v1/completions (use /v1/chat/completions)", param=name)
    if not isinstance(data, dict):
        raise bad_request(f"the request body must be a JSON object, not {type(data).__name__}")
    try:
        body = cls.model_validate(data)
    except ValidationError as exc:
        if cls is CompletionRequest and any(error["loc"][:1] == ("prompt",) for error in exc.errors()):
            # A union of four shapes: its alternatives' errors would name one shape the caller never meant.
            raise bad_request("prompt: must be text, a list of texts, a list of token ids, or a list of such lists, all of one kind", param="prompt") from None
        raise _describe(exc) from None
    body.check_supported()
    return body


def _describe(exc: ValidationError) -> ApiError:
    errors = exc.errors(include_url=False)
    # Of a union's errors (one per alternative), the deepest points at what is actually wrong: stop[0], not stop.
    first = max(errors, key=lambda e: len(e["loc"]))
    # A union reports one error per alternative; the field's path without the alternative's tag is what the caller wrote.
    loc = [part for part in first["loc"] if not (isinstance(part, str) and ("[" in part or part in ("str", "list", "bool", "int")))]
    param = ".".join(str(part) for part in loc) or None
    if first["type"] == "missing":
        return bad_request(f"{param}: this field is required", param=param)
    if first["type"] == "extra_forbidden":
        return bad_request(f"{param}: this server does not support this field (it is refused rather than ignored)", param=param)
    got = first.get("input")
    got_type = "null" if got is None else type(got).__name__
    return bad_request(f"{param}: {first['msg']} (got {got_type})", param=param)
