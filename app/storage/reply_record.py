"""A reply's record: the runtime's figures for it, why it ended, or what went wrong; typed from the store to the panel.

The messages table keeps it in its `stats` column as one JSON object, in the shape every Lokal
has written: GenerationStats' fields with "finish_reason" beside them for a reply that ended,
or {"error": ...} alone for one that failed. That shape is read here, once, into a ReplyRecord;
everything above the store (the chat controller, the message view, the metrics panel, the JSON
export) works with the dataclass.

A stored object this Lokal cannot read whole is never fatal: a figure of the wrong type (a
hand-edited file, a bug in an older version) drops that row's figures, a finish reason it does
not know drops the reason, and each is logged naming the message and the field. A figure it
does not know (written by a newer Lokal) is left out. The row itself is never rewritten, so
nothing is lost.
"""

from __future__ import annotations

import json
import logging
import typing
from dataclasses import dataclass, fields
from typing import Any

from runtime.protocol import FinishReason, GenerationStats, RpcError, decode, encode

log = logging.getLogger("lokal.storage")

_STAT_NAMES = frozenset(f.name for f in fields(GenerationStats))
_FINISH_REASONS: tuple[str, ...] = typing.get_args(FinishReason)


@dataclass
class ReplyRecord:
    """What a reply's end left. `stats`: the runtime's (or a remote client's) figures, None when it had
    none (it failed, or the runtime died). `finish_reason`: why it ended, None when it did not end on
    its own terms. `error`: why it failed or was interrupted ("" when it did not)."""

    stats: GenerationStats | None = None
    finish_reason: FinishReason | None = None
    error: str = ""


def stored_form(record: ReplyRecord) -> dict[str, Any]:
    """The JSON object the store (and the conversation export) keeps for `record`."""
    out: dict[str, Any] = encode(record.stats) if record.stats is not None else {}
    if record.finish_reason is not None:
        out["finish_reason"] = record.finish_reason
    if record.error:
        out["error"] = record.error
    return out


def to_stored(record: ReplyRecord | None) -> str | None:
    """The `stats` column's text for `record` (None: NULL)."""
    return json.dumps(stored_form(record)) if record is not None else None


def from_stored(text: str | None, message_id: int) -> ReplyRecord | None:
    """The record kept in message `message_id`'s `stats` column (None when it has none, or none that can be read)."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        log.warning("message %d: its stored figures are not JSON (%s); shown without them", message_id, exc)
        return None
    if not isinstance(data, dict):
        log.warning("message %d: its stored figures are a %s, not an object; shown without them", message_id, type(data).__name__)
        return None
    return from_stored_form(data, message_id)


def from_stored_form(data: dict[str, Any], message_id: int) -> ReplyRecord:
    """A ReplyRecord from the stored JSON object, each part checked on its own (see the module docstring)."""
    record = ReplyRecord()
    figures = {name: value for name, value in data.items() if name in _STAT_NAMES}
    if figures:
        try:
            record.stats = decode(GenerationStats, figures, "stats")
        except RpcError as exc:
            log.warning("message %d: stored figure %s; shown without its figures", message_id, exc.message)
    unknown = sorted(set(data) - _STAT_NAMES - {"finish_reason", "error"})
    if unknown:
        log.debug("message %d: stored figures this Lokal does not know, left out: %s", message_id, unknown)
    reason = data.get("finish_reason")
    if reason in _FINISH_REASONS:
        record.finish_reason = typing.cast(FinishReason, reason)
    elif reason is not None:
        log.warning("message %d: stored finish_reason %r is not one of %s; left out", message_id, reason, list(_FINISH_REASONS))
    error = data.get("error")
    if isinstance(error, str):
        record.error = error
    elif error is not None:
        log.warning("message %d: stored error is a %s, not a string; kept as its text", message_id, type(error).__name__)
        record.error = str(error)
    return record
