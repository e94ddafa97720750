"""`/v1/embeddings`, OpenAI-compatible, served by the embedding model loaded beside the chat model (runtime/embeddings).

Input is a string or a list of strings (token arrays, which OpenAI also takes, are refused by name:
token ids of which tokenizer would be a guess); `encoding_format` float (lists of numbers) or base64
(the little-endian float32 bytes, as OpenAI's clients decode them). Each text is embedded alone, so a
text's vector is the same in a batch as by itself. A text longer than the model's context is a 400
naming its index, as OpenAI refuses one, rather than a vector of a silently cut text.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Literal, Optional, Union

import numpy as np
from aiohttp import web
from pydantic import Field, StrictInt, StrictStr, ValidationError

from runtime.api import errors, schema
from runtime.api.backend import Backend, model_name
from runtime.embeddings.model import TextTooLong

MAX_INPUTS = 2048  # OpenAI's own limit on the texts in one request


class EmbeddingsRequest(schema._Body):
    model: StrictStr
    input: Union[StrictStr, list[StrictStr], list[StrictInt], list[list[StrictInt]]]
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: Optional[StrictInt] = Field(None, ge=1)
    user: Optional[StrictStr] = None

    def texts(self) -> list[str]:
        texts = [self.input] if isinstance(self.input, str) else self.input
        if not texts:
            raise errors.bad_request("input: must not be an empty list", param="input")
        if len(texts) > MAX_INPUTS:
            raise errors.bad_request(f"input: {len(texts)} inputs; at most {MAX_INPUTS} in one request", param="input")
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise errors.bad_request("input: token arrays are not supported by this server; send the text", param="input")
            if not text:
                raise errors.bad_request(f"input[{index}]: must not be empty", param=f"input[{index}]")
        return texts  # type: ignore[return-value]  # every item was checked to be a str


async def embeddings(request: web.Request, backend: Backend) -> web.Response:
    raw = await request.read()
    data = await asyncio.to_thread(_decode, raw) if len(raw) > 64 * 1024 else _decode(raw)
    try:
        body = EmbeddingsRequest.model_validate(data)
    except ValidationError as exc:
        raise schema._describe(exc) from None
    model = backend.engine.embedding_model()
    if model is None:
        raise errors.ApiError(
            503, "no embedding model is loaded: start the server with `lokal serve --embedding-model PATH`", type="server_error", code="model_unavailable"
        )
    name = model_name(model.path)
    if body.model != name:
        raise errors.model_not_found(body.model, [name])
    texts = body.texts()
    if body.dimensions is not None and body.dimensions != model.dimensions:
        raise errors.bad_request(f"dimensions: {name} gives {model.dimensions}-dimensional vectors and cannot shorten them", param="dimensions")
    try:
        embedded = await asyncio.to_thread(model.embed, texts)
    except TextTooLong as exc:
        raise errors.bad_request(f"{exc}; shorten it or split it", param=f"input[{exc.index}]", code="context_length_exceeded") from None
    rows = [{"object": "embedding", "index": i, "embedding": _encoded(vector, body.encoding_format)} for i, vector in enumerate(embedded.vectors)]
    usage = {"prompt_tokens": embedded.tokens, "total_tokens": embedded.tokens}
    return web.json_response({"object": "list", "data": rows, "model": name, "usage": usage})


def _decode(raw: bytes) -> object:
    from runtime.api.http import decode_body  # the same JSON rules (depth, errors) as every other endpoint

    data = decode_body(raw)
    if not isinstance(data, dict):
        raise errors.bad_request(f"the request body must be a JSON object, not {type(data).__name__}")
    return data


def _encoded(vector: np.ndarray, encoding_format: str) -> list[float] | str:
    if encoding_format == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return [float(x) for x in vector]
