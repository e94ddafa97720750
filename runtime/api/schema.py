"""Request bodies of the endpoints, validated with pydantic in strict mode.

Strict: "5" is not a number and 1 is not a bool, as in OpenAI's own API. Fields
this server does not know are ignored (clients send `user`, `logprobs: false`,
...), but those that would change the reply and are not supported are refused
rather than silently dropped.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from runtime.api.errors import ApiError, bad_request

Number = Annotated[float, Field(strict=True)]

# OpenAI allows up to 4 stop sequences.
MAX_STOP = 4


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class TextPart(_Body):
    type: Literal["text"]
    text: StrictStr


class Message(_Body):
    role: Literal["system", "developer", "user", "assistant"]
    content: Union[StrictStr, list[TextPart]]

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content)

    def runtime_role(self) -> str:
        return "system" if self.role == "developer" else self.role  # "developer" is OpenAI's newer name for system


class StreamOptions(_Body):
    include_usage: StrictBool = False


class _Sampling(_Body):
    model: StrictStr
    max_tokens: Optional[StrictInt] = Field(None, ge=0)
    temperature: Optional[Number] = Field(None, ge=0.0, le=2.0)
    top_p: Optional[Number] = Field(None, gt=0.0, le=1.0)
    top_k: Optional[StrictInt] = Field(None, ge=0)  # llama.cpp's server accepts it too
    seed: Optional[StrictInt] = None
    stop: Union[None, StrictStr, list[StrictStr]] = None
    stream: StrictBool = False
    stream_options: Optional[StreamOptions] = None
    n: Optional[StrictInt] = Field(None, ge=1, le=1)
    logprobs: Optional[Union[StrictBool, StrictInt]] = None

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
        if self.logprobs:
            raise bad_request("logprobs are not supported by this server", param="logprobs")


class ChatCompletionRequest(_Sampling):
    messages: list[Message] = Field(min_length=1)
    max_completion_tokens: Optional[StrictInt] = Field(None, ge=0)  # OpenAI's newer name for max_tokens

    def requested_max_tokens(self) -> int | None:
        return self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens


class CompletionRequest(_Sampling):
    prompt: Union[StrictStr, list[StrictStr]]
    echo: StrictBool = False
    suffix: Optional[StrictStr] = None

    def prompt_text(self) -> str:
        if isinstance(self.prompt, str):
            return self.prompt
        if len(self.prompt) != 1:
            raise bad_request("prompt: one prompt per request (a list must hold exactly one string)", param="prompt")
        return self.prompt[0]

    def requested_max_tokens(self) -> int | None:
        return self.max_tokens

    def check_supported(self) -> None:
        super().check_supported()
        if self.echo:
            raise bad_request("echo is not supported by this server", param="echo")
        if self.suffix:
            raise bad_request("suffix (fill-in-the-middle) is not supported by this server", param="suffix")


def parse(cls: type[_Body], data: object) -> _Body:
    """Validate a decoded JSON body; ApiError 400 naming the first bad field."""
    if not isinstance(data, dict):
        raise bad_request(f"the request body must be a JSON object, not {type(data).__name__}")
    try:
        body = cls.model_validate(data)
    except ValidationError as exc:
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
    got = first.get("input")
    got_type = "null" if got is None else type(got).__name__
    return bad_request(f"{param}: {first['msg']} (got {got_type})", param=param)
