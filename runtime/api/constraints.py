"""A request's grammar and JSON schema, checked before it is admitted, on a worker thread.

Both are checked here, not only in the runtime's engine, so that a 400 names the
request's own field (`grammar`, `response_format.json_schema.schema`). Turning a
large schema into a grammar takes seconds of pure Python; on the API's event loop
that would stall every other reply's stream, so the check runs on the loop's
default executor and the loop goes on writing other replies meanwhile.
"""

from __future__ import annotations

import asyncio

from runtime.api import errors, schema
from runtime.engine.structured import GrammarError, SchemaError, check_grammar, schema_grammar

SCHEMA_PARAM = "response_format.json_schema.schema"


def check(body: schema._Sampling) -> None:
    """ApiError 400 naming the field, for a grammar past the parser's limits or a schema a grammar cannot enforce."""
    if body.grammar is not None:
        try:
            check_grammar(body.grammar)
        except GrammarError as exc:
            raise errors.bad_request(f"grammar: {exc}", param="grammar", code="grammar_too_large") from None
    fmt = getattr(body, "response_format", None)
    if fmt is not None and fmt.type == "json_schema":
        try:
            schema_grammar(fmt.json_schema.schema_)
        except SchemaError as exc:
            raise errors.bad_request(f"{SCHEMA_PARAM}: {exc}", param=SCHEMA_PARAM, code="invalid_schema") from None


async def check_off_loop(body: schema._Sampling) -> None:
    if body.grammar is not None or getattr(body, "response_format", None) is not None:
        await asyncio.to_thread(check, body)
