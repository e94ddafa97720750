"""The HTTP side of the API: an aiohttp application over the Backend (runtime/api/service.py runs it).

Why aiohttp: one well-kept package gives the server, a body-size limit
(`client_max_size`, enforced while the body is read), streamed responses for
server-sent events, and cancellation of a handler when its client hangs up,
which is what stops a reply nobody reads. The stdlib's http.server would need
all of that written by hand, and a thread per connection.

Middlewares, outermost first: the Host check (loopback bindings only), CORS
preflights (only for the origins given), OpenAI-style error bodies, then the
bearer key. CORS headers go on in on_response_prepare, the one hook every
response passes, streams included (a middleware sees a stream only once it is sent).

The Host check is against DNS rebinding: a web page whose name an attacker
points at 127.0.0.1 is same-origin with this server to the browser, but its
requests still say its own name in Host. Bound to loopback, only the loopback
names (with this server's port) are answered.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from typing import Awaitable, Callable, Iterable

from aiohttp import web

from runtime.api import address, constraints, errors, images, keys, schema, tokens
from runtime.api.embeddings import embeddings
from runtime.api.files import attach_files
from runtime.api.backend import Backend
from runtime.api.conversation import chat_conversation_id, text_conversation_id
from runtime.api.errors import ApiError
from runtime.api.reply import respond
from runtime.api.responses import RawPrompt, Shapes
from runtime.engine.structured import ANY_OBJECT
from runtime.protocol import Attachment, ChatGenerateParams, ChatMessage, ErrorCode, LogitBias, RpcError, ToolCall, ToolSpec

log = logging.getLogger("lokal.api")

DEFAULT_MAX_BODY = 4 * 1024 * 1024
BACKEND = web.AppKey("backend", Backend)
ALLOW_REMOTE_IMAGES = web.AppKey("allow_remote_images", bool)
API_KEY = web.AppKey("api_key", str)
OPEN_PATHS = {"/health"}  # no key needed: without one it says only "ok"
MAX_JSON_DEPTH = 64  # nesting of a request body; JSON schemas and tool parameters stay far below it
# Messages in one chat request. LM Studio's and llama-server's clients send at most a few thousand, and a
# chat template spends at least 3 to 5 tokens on each message's header, so 10,000 messages fill a context
# of 32,000 to 50,000 tokens with headers alone: more is a client's bug or a crafted body (issue #33: 50,000
# one-letter messages in 1.5 MB held the runtime for minutes). Refused with a 400 before anything else is
# done with them. The window's own conversations are not bound by this (the runtime takes 100,000).
MAX_MESSAGES = 10_000
# A body larger than this is decoded and validated on a worker thread, not on the event loop that streams
# every other request's reply.
INLINE_BODY_BYTES = 64 * 1024
# Request fields the runtime takes as they are (llama-server's names where they differ: repeat_last_n).
SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "typical_p", "repeat_penalty", "frequency_penalty", "presence_penalty", "dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n", "grammar")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def create_app(backend: Backend, api_key: str, cors_origins: Iterable[str] = (), max_body: int = DEFAULT_MAX_BODY, loopback: bool = False, allow_remote_images: bool = False) -> web.Application:
    """`loopback`: the server listens on loopback only, so requests must name it by a loopback name (DNS rebinding).
    `allow_remote_images`: image_url parts may be http(s) URLs, which the server fetches (runtime/api/images.py)."""
    origins = frozenset(cors_origins)

    def allowed_origin(request: web.Request) -> str | None:
        origin = request.headers.get("Origin")
        return origin if origin is not None and ("*" in origins or origin in origins) else None

    @web.middleware
    async def host_check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if loopback and not address.is_local_host_header(request.headers.get("Host"), _local_port(request)):
            return error_response(errors.misdirected(request.headers.get("Host")))
        return await handler(request)

    @web.middleware
    async def preflight(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method == "OPTIONS" and allowed_origin(request):
            return web.Response(status=204)
        return await handler(request)

    async def cors_headers(request: web.Request, response: web.StreamResponse) -> None:
        origin = allowed_origin(request)
        if origin is not None:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
            response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
            response.headers["Vary"] = "Origin"

    @web.middleware
    async def error_bodies(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except ApiError as exc:
            return error_response(exc)
        except web.HTTPException as exc:
            return error_response(from_http(exc, max_body))
        except RpcError as exc:
            return error_response(errors.from_runtime(exc))
        except (asyncio.CancelledError, ConnectionResetError):
            raise  # the caller hung up: nobody to answer
        except Exception as exc:
            # Our fault: the details go to the log, the caller gets an id that finds them there.
            return error_response(errors.from_runtime(exc))

    @web.middleware
    async def bearer_key(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path not in OPEN_PATHS and not keys.matches(api_key, request.headers.get("Authorization")):
            raise errors.unauthorized()
        return await handler(request)

    app = web.Application(client_max_size=max_body, middlewares=[host_check, preflight, error_bodies, bearer_key])
    app.on_response_prepare.append(cors_headers)
    app[BACKEND] = backend
    app[API_KEY] = api_key
    app[ALLOW_REMOTE_IMAGES] = allow_remote_images
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/models/{model:.+}", get_model)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/embeddings", embeddings_endpoint)
    app.router.add_post("/tokenize", tokenize_endpoint)  # llama-server's, for clients that count tokens with them
    app.router.add_post("/detokenize", detokenize_endpoint)
    return app


def _local_port(request: web.Request) -> int | None:
    """The port this connection came in on (port 0 binds pick one: the request's socket knows which)."""
    sockname = request.transport.get_extra_info("sockname") if request.transport is not None else None
    return sockname[1] if sockname else None


def error_response(exc: ApiError) -> web.Response:
    return web.json_response(exc.body(), status=exc.status, headers=exc.headers())


def from_http(exc: web.HTTPException, max_body: int) -> ApiError:
    if exc.status == 413:
        return ApiError(413, f"the request body is larger than this server's limit of {max_body} bytes", code="request_too_large")
    if exc.status == 404:
        return ApiError(404, "no such endpoint; this server has GET /v1/models, POST /v1/chat/completions and POST /v1/completions", code="unknown_url")
    if exc.status == 405:
        return ApiError(405, f"{exc.reason}: this endpoint does not take that method", code="method_not_allowed")
    return ApiError(exc.status, exc.reason or "HTTP error")


# ---- endpoints -----------------------------------------------------------------
async def health(request: web.Request) -> web.Response:
    """Without the key: "ok", and nothing about the model or the queue. With it: the details."""
    if not keys.matches(request.app[API_KEY], request.headers.get("Authorization")):
        return web.json_response({"status": "ok"})
    backend = request.app[BACKEND]
    body = {"status": backend.state, "model": backend.name, "running": backend.running, "queued": backend.queued}
    return web.json_response(body, status=200 if backend.state == "ready" else 503)


def model_object(backend: Backend, name: str) -> dict:
    model = backend.model
    offload = dataclasses.asdict(model.offload) if model is not None and model.offload is not None else None  # where its layers run (GPU or CPU)
    return {"id": name, "object": "model", "created": 0, "owned_by": "lokal", "context_length": backend.n_ctx, "status": backend.state, "offload": offload}


async def list_models(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    name = backend.name  # the model the runtime holds now: the window may load another one at any time
    return web.json_response({"object": "list", "data": [model_object(backend, name)] if name else []})


async def get_model(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    requested = request.match_info["model"]
    backend.check_name(requested)
    return web.json_response(model_object(backend, requested))


async def read_request(request: web.Request, cls: type[schema.Request]) -> schema.Request:
    """The request's body, decoded and validated; a large one on a worker thread (INLINE_BODY_BYTES)."""
    raw = await request.read()  # HTTPRequestEntityTooLarge past client_max_size
    if len(raw) <= INLINE_BODY_BYTES:
        return parse_body(cls, raw)
    return await asyncio.to_thread(parse_body, cls, raw)


def parse_body(cls: type[schema.Request], raw: bytes) -> schema.Request:
    data = decode_body(raw, check_message_count if cls is schema.ChatCompletionRequest else None)
    return schema.parse(cls, data)


def check_message_count(data: object) -> None:
    """400 naming the limit and the count for a chat request of more than MAX_MESSAGES messages."""
    messages = data.get("messages") if isinstance(data, dict) else None
    if isinstance(messages, list) and len(messages) > MAX_MESSAGES:
        raise errors.bad_request(f"messages: {len(messages)} messages; this server accepts at most {MAX_MESSAGES} in one request", param="messages", code="too_many_messages")


def decode_body(raw: bytes, first: Callable[[object], None] | None = None) -> object:
    """A request body's JSON; ApiError 400 for anything that is not. `first` looks at the data before its
    depth is walked (which takes longer than decoding it): a cheap check that refuses a body at once."""
    try:
        data = json.loads(raw)
    except RecursionError:
        data = None
    except (UnicodeDecodeError, ValueError) as exc:
        raise errors.bad_request(f"the request body is not valid JSON: {exc}", code="invalid_json") from None
    if first is not None:
        first(data)
    if data is None and raw.strip() != b"null" or _depth_over(data, MAX_JSON_DEPTH):
        raise errors.bad_request(f"the request body is nested more than {MAX_JSON_DEPTH} levels deep", code="invalid_json")
    return data


def _depth_over(data: object, limit: int) -> bool:
    """Whether JSON data nests deeper than `limit` (iteratively: no recursion to run out of)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return True
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return False


def _params(backend: Backend, body: schema._Sampling, conversation_id: str, messages: list[ChatMessage], prompt: str | None) -> ChatGenerateParams:
    body.check_windows(backend.n_ctx)
    defaults = backend.defaults  # a preset's (lokal serve --preset): they fill what the request leaves out
    requested = body.requested_max_tokens()
    params = ChatGenerateParams(conversation_id, messages, max_tokens=backend.max_tokens(requested if requested is not None else defaults.max_tokens), stop=body.stop_list(), prompt=prompt)
    # Only what the caller set overrides the runtime's defaults (or the preset's).
    for name in SAMPLING_FIELDS:
        value = getattr(body, name)
        if value is None:
            value = getattr(defaults, name, None)
        if value is not None:
            setattr(params, name, value)
    if body.repeat_last_n is not None:
        params.penalty_last_n = body.repeat_last_n
    params.seed = body.seed_in_range() if body.seed is not None else defaults.seed
    params.logit_bias = [LogitBias(token, bias) for token, bias in body.logit_biases()]
    params.logprobs = body.alternatives()
    return params


def _chat_options(params: ChatGenerateParams, body: schema.ChatCompletionRequest) -> None:
    """response_format and tools, onto the runtime's request."""
    fmt = body.response_format
    if fmt is not None and fmt.type == "json_object":
        params.json_schema = ANY_OBJECT
    elif fmt is not None and fmt.type == "json_schema":
        assert fmt.json_schema is not None  # ChatCompletionRequest.check_supported refused a json_schema without one
        params.json_schema = fmt.json_schema.schema_  # checked by constraints.check, so an error names the request's field
    params.tools = [ToolSpec(t.function.name, t.function.description or "", t.function.parameters or {}) for t in body.tools or []]
    choice = body.tool_choice
    if isinstance(choice, schema.NamedToolChoice):
        params.tool_choice, params.tool_name = "required", choice.function.name
    elif choice is not None:
        params.tool_choice = choice
    if body.reasoning_format is not None:
        params.reasoning_format = body.reasoning_format
    params.reasoning_effort, params.enable_thinking, params.reasoning_budget = body.effort(), body.enable_thinking(), body.reasoning_budget


def _message(m: schema.Message, pictures: list[Attachment] | None = None) -> ChatMessage:
    calls = [ToolCall(c.id, c.function.name, c.function.arguments) for c in m.tool_calls or []]
    return ChatMessage(m.runtime_role(), m.text(), calls, m.tool_call_id, m.name if m.role == "tool" else None, m.reasoning_content or "", attachments=pictures or [])


async def _pictures(request: web.Request, backend: Backend, m: schema.Message, index: int) -> list[Attachment]:
    """A message's image_url parts as stored pictures; 400 when the model cannot see or a part cannot be used."""
    urls = m.image_urls()
    if not urls:
        return []
    param = f"messages[{index}].content[{urls[0][0]}].image_url"
    model = backend.model
    if model is not None and not model.vision:
        raise errors.bad_request(f"{param}: the model {backend.name!r} cannot see images (it is served without a projector: `lokal serve --mmproj PATH`)", param=param, code="model_not_multimodal")
    if m.role != "user":
        raise errors.bad_request(f"{param}: images are taken in user messages only", param=param)
    allow_remote = request.app[ALLOW_REMOTE_IMAGES]
    return [await images.attachment(url, f"messages[{index}].content[{i}].image_url.url", allow_remote) for i, url in urls]


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _expected(request, _chat_completions)


async def completions(request: web.Request) -> web.StreamResponse:
    return await _expected(request, _completions)


async def _expected(request: web.Request, handler: Callable[[web.Request, Backend, Callable[[], None]], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    """A reply's request, expected by the scheduler from now until its reply is submitted (or it is refused): a
    wave of prompts starting meanwhile waits for it, and a request nothing else comes with starts at once."""
    backend = request.app[BACKEND]
    arrived = backend.expect_reply()
    try:
        return await handler(request, backend, arrived)
    finally:
        arrived()


async def _chat_completions(request: web.Request, backend: Backend, arrived: Callable[[], None]) -> web.StreamResponse:
    body = await read_request(request, schema.ChatCompletionRequest)
    backend.check_model(body.model)
    await constraints.check_off_loop(body)
    messages = [_message(m, await _pictures(request, backend, m, i)) for i, m in enumerate(body.messages)]
    await attach_files(backend, body.messages, messages)  # file parts: stored documents, whole or retrieved (runtime/documents)
    if backend.defaults.system_prompt and not any(m.role == "system" for m in messages):
        messages.insert(0, ChatMessage("system", backend.defaults.system_prompt))  # the preset's, for a chat that brings none (after the files: their indices are the request's)
    params = _params(backend, body, chat_conversation_id(messages), messages, None)
    _chat_options(params, body)
    return await respond(request, backend, body, [params], Shapes(chat=True, model=body.model, logprobs=params.logprobs is not None, n=body.n or 1), arrived)


async def embeddings_endpoint(request: web.Request) -> web.Response:
    return await embeddings(request, request.app[BACKEND])


async def tokenize_endpoint(request: web.Request) -> web.Response:
    return await tokens.tokenize(await read_request(request, tokens.TokenizeRequest), request.app[BACKEND])


async def detokenize_endpoint(request: web.Request) -> web.Response:
    return await tokens.detokenize(await read_request(request, tokens.DetokenizeRequest), request.app[BACKEND])


async def _completions(request: web.Request, backend: Backend, arrived: Callable[[], None]) -> web.StreamResponse:
    body = await read_request(request, schema.CompletionRequest)
    backend.check_model(body.model)
    await constraints.check_off_loop(body)
    given = body.prompts()
    prompts = [await _raw_prompt(backend, prompt, f"prompt[{i}]" if len(given) > 1 else "prompt", body.echo) for i, prompt in enumerate(given)]
    requests = []
    for prompt, tokens in zip(prompts, given):
        params = _params(backend, body, text_conversation_id(prompt.text), [], prompt.text)
        params.prompt_tokens = tokens if isinstance(tokens, list) else None
        params.prompt_logprobs = body.echo and params.logprobs is not None  # echo's figures: the prompt is scored too
        requests.append(params)
    shapes = Shapes(chat=False, model=body.model, logprobs=body.logprobs is not None, prompts=prompts, echo=body.echo, n=body.n or 1)
    return await respond(request, backend, body, requests, shapes, arrived)


async def _raw_prompt(backend: Backend, prompt: str | list[int], param: str, echo: bool) -> RawPrompt:
    """A legacy completion's prompt: text as it came, token ids spelled by the loaded model (400 for one it does not have)."""
    if isinstance(prompt, str):
        return RawPrompt(prompt)
    try:
        text = await asyncio.to_thread(backend.engine.spell, prompt)
        first = await asyncio.to_thread(backend.engine.spell, prompt[:1]) if echo else None
    except RpcError as exc:
        if exc.code == ErrorCode.INVALID_PARAMS:
            raise errors.bad_request(exc.message.replace("params.prompt_tokens", param, 1), param=param) from None
        raise errors.from_runtime(exc) from None
    return RawPrompt(text, first)
