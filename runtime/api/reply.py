"""One completion request's answer: its `n` choices decoded side by side, sent whole or streamed as server-sent events.
A legacy completion may bring several prompts: each gets its `n` choices, all of them decoded side by side.

Each choice is a reply of its own in the engine (backend.Generation), decoded in the same batches as
every other: choice i > 0 in a conversation of its own (`<id>/<i>`, so that each reply has its own
cache) with seed + i, so that sampled choices differ and greedy ones agree, as OpenAI's do. The
prompt is read once: the other choices wait for the first one's prefill and share its cells
(runtime/scheduler), and only the first keeps its state when it ends. Streamed, each
choice's chunks go out as they come, with its index; its tool calls are parsed from its own text.
Nothing is sent before the first choice's first piece of text (or its end): an error that comes
first, such as a prompt longer than the context, still gets its proper status.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Callable, Iterable

from aiohttp import web

from runtime.api import errors, schema
from runtime.api.backend import Backend, Generation, Piece
from runtime.api.responses import SSE_DONE, Shapes, sse
from runtime.engine.tools import Event, ToolCallParser
from runtime.protocol import ChatGenerateParams, ChatGenerateResult, RpcError


def choice_params(params: ChatGenerateParams, n: int) -> list[ChatGenerateParams]:
    """The runtime's request for each of `n` choices: the first as asked, the others in conversations of their own."""
    choices = [params]
    for i in range(1, n):
        seed = None if params.seed is None else (params.seed + i) % schema.SEED_RANGE
        # Only the first keeps its state: the same request again restores it, and the others share its cells.
        choices.append(dataclasses.replace(params, conversation_id=f"{params.conversation_id}/{i}", seed=seed, keeps_state=False))
    return choices


async def respond(request: web.Request, backend: Backend, body: schema._Sampling, prompts: list[ChatGenerateParams], shapes: Shapes, arrived: Callable[[], None] | None = None) -> web.StreamResponse:
    """`prompts`: the runtime's request for each prompt (a chat has one); choice i is prompt i // n's."""
    params = prompts[0]
    choices = [choice for prompt in prompts for choice in choice_params(prompt, body.n or 1)]
    async with backend.generations(choices, arrived, "n" if len(prompts) == 1 else "prompt") as generations:
        first = await generations[0].next_text()
        if not body.stream:
            outcomes = await asyncio.gather(*(_whole(g, ended=(i == 0 and first is None)) for i, g in enumerate(generations)), return_exceptions=True)
            failed = next((o for o in outcomes if isinstance(o, BaseException)), None)
            if failed is not None:
                raise failed  # the same prompt fails every choice alike: the first error answers the request
            return web.json_response(shapes.complete([o for o in outcomes if isinstance(o, ChatGenerateResult)]))
        if first is None:
            await generations[0].result()  # its error, if it failed, with its status
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        await response.prepare(request)
        for index in range(len(generations)):
            opening = shapes.first_chunk(index)
            if opening is not None:
                await response.write(sse(opening))
        # With tools the stream is split as it comes: text for the user, and each call once it is whole.
        model = backend.model
        tool_format = model.tool_format if model is not None else "hermes"
        parsers = [ToolCallParser(tool_format, params.tools) if params.tools and params.tool_choice != "none" else None for _ in generations]
        streamed = await _stream(response, shapes, generations, parsers, first)
        if streamed is None:  # an error event ended the stream
            return response
        if body.include_usage:
            await response.write(sse(shapes.usage_chunk(streamed)))
        await response.write(SSE_DONE)
        await response.write_eof()
        return response


async def _whole(generation: Generation, ended: bool) -> ChatGenerateResult:
    """A choice's result once its pieces are all in (`ended`: the end was taken already, as the first choice's first piece)."""
    if not ended:
        async for _ in generation.texts():
            pass
    return await generation.result()


async def _stream(response: web.StreamResponse, shapes: Shapes, generations: list[Generation], parsers: list[ToolCallParser | None], first: Piece | None) -> list[ChatGenerateResult] | None:
    """Every choice's pieces as they come, then its last chunk; the results, or None if a choice failed (an error event
    went out instead: the status line is long gone, so the error travels as an event, as OpenAI's streams do)."""
    pieces: asyncio.Queue[tuple[int, Piece | None]] = asyncio.Queue()

    async def pump(index: int) -> None:
        generation = generations[index]
        if index == 0:
            await pieces.put((0, first))
            if first is None:
                return  # the first choice has ended already
        async for piece in generation.texts():
            await pieces.put((index, piece))
        await pieces.put((index, None))

    pumps = [asyncio.create_task(pump(index)) for index in range(len(generations))]
    results: list[ChatGenerateResult | None] = [None] * len(generations)
    try:
        left = len(generations)
        while left:
            index, piece = await pieces.get()
            calls = parsers[index]
            if piece is not None:
                await _write_piece(response, shapes, calls, piece, index)
                continue
            left -= 1
            if calls is not None:
                await _write_events(response, shapes, calls.finish(), index)
            try:
                result = await generations[index].result()
            except RpcError as exc:
                await response.write(sse(errors.from_runtime(exc).body()))
                await response.write_eof()
                return None
            results[index] = result
            await response.write(sse(shapes.last_chunk(result, index)))
    finally:
        for task in pumps:
            task.cancel()
    return [r for r in results if r is not None]


async def _write_piece(response: web.StreamResponse, shapes: Shapes, calls: ToolCallParser | None, piece: Piece, index: int) -> None:
    shapes.hold(piece.logprobs, index)
    if piece.reasoning:
        await response.write(sse(shapes.reasoning_chunk(piece.reasoning, index)))
    if piece.text:
        if calls is None:
            await response.write(sse(shapes.text_chunk(piece.text, index)))
        else:
            await _write_events(response, shapes, calls.push(piece.text), index)


async def _write_events(response: web.StreamResponse, shapes: Shapes, events: Iterable[Event], index: int) -> None:
    for event in events:
        if event.call is not None:
            for chunk in shapes.tool_call_chunks(event.call, index):
                await response.write(sse(chunk))
        elif event.text:
            await response.write(sse(shapes.text_chunk(event.text, index)))
