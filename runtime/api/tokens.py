"""`/tokenize` and `/detokenize`, as llama-server serves them (clients such as SillyTavern count a prompt's tokens
with them): the loaded model's own tokenizer, never a guess.

`/tokenize` takes `content`, `add_special` (the model's BOS, as a prompt starts; default false), `parse_special`
(special tokens' names are read as the tokens; default true) and `with_pieces` (each id with the text it stands for:
a string where its bytes are UTF-8, else the list of its bytes, as llama-server gives them). `/detokenize` takes
`tokens` and gives their `content`, special tokens written out; an id the model does not have is a 400 naming it.
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from pydantic import StrictBool, StrictInt, StrictStr

from runtime.api import errors, schema
from runtime.api.backend import Backend
from runtime.protocol import ErrorCode, RpcError


class TokenizeRequest(schema._Body):
    content: StrictStr
    add_special: StrictBool = False
    parse_special: StrictBool = True
    with_pieces: StrictBool = False


class DetokenizeRequest(schema._Body):
    tokens: list[StrictInt]


async def tokenize(body: TokenizeRequest, backend: Backend) -> web.Response:
    backend.check_available()
    ids, pieces = await asyncio.to_thread(backend.engine.tokenize, body.content, body.add_special, body.parse_special, body.with_pieces)
    if not body.with_pieces:
        return web.json_response({"tokens": ids})
    return web.json_response({"tokens": [{"id": token, "piece": _piece(piece)} for token, piece in zip(ids, pieces)]})


async def detokenize(body: DetokenizeRequest, backend: Backend) -> web.Response:
    backend.check_available()
    try:
        content = await asyncio.to_thread(backend.engine.spell, body.tokens) if body.tokens else ""
    except RpcError as exc:
        if exc.code != ErrorCode.INVALID_PARAMS:
            raise
        raise errors.bad_request(f"tokens: {exc.message}", param="tokens") from None
    return web.json_response({"content": content})


def _piece(piece: bytes) -> str | list[int]:
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:  # part of a character: its bytes, as llama-server gives them
        return list(piece)
