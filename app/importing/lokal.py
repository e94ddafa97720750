"""Lokal's own JSON export (app/chat/export.py): `messages` is the path that was on screen, `branches` the rest
of the tree. A file of format version 1 from before branches has neither ids nor parents: its messages are one path.

Each message keeps its reply's thinking (`reasoning`, `thinking_ms`) and its citations (each carries the text the
reply was given). Its `attachments` name files without their bytes: the store links those it keeps already (the
same computer) and leaves out the others, which the import's summary counts (Store.add_conversations). Files
from before these fields were added read as messages without them.
"""

from __future__ import annotations

import time
from typing import Any, Callable, TypeVar

from app.importing.conversation import ROLES, ImportedConversation, ImportedMessage, ImportRefused
from app.importing.reading import check, get, not_negative, timestamp
from app.storage import store as st
from app.storage.attachments import StoredAttachment, StoredCitation
from app.storage.reply_record import from_stored_form

FORMAT_PREFIX = "lokal.conversation/"
T = TypeVar("T")
KINDS = ("document", "image")  # the attachments table's CHECK
STATES = {st.COMPLETE: st.COMPLETE, st.STOPPED: st.STOPPED, st.INTERRUPTED: st.INTERRUPTED, st.FAILED: st.FAILED, st.STREAMING: st.INTERRUPTED}


def recognises(data: object) -> bool:
    items = data if isinstance(data, list) else [data]
    return bool(items) and all(isinstance(i, dict) and str(i.get("format", "")).startswith(FORMAT_PREFIX) for i in items)


def read(data: Any) -> list[ImportedConversation]:
    items = data if isinstance(data, list) else [data]
    return [_conversation(item, f"[{i}]" if isinstance(data, list) else "the file") for i, item in enumerate(items)]


def _conversation(item: dict[str, Any], where: str) -> ImportedConversation:
    now = time.time()
    conv = ImportedConversation(
        "lokal", where, get(item, "title", str, where, default="") or "Imported chat",
        timestamp(item, "created_at", where, now), timestamp(item, "updated_at", where, now),
        system_prompt=get(item, "system_prompt", str, where, default=""), settings=get(item, "settings", dict, where, default={}),
    )
    previous: str | None = None
    for j, raw in enumerate(get(item, "messages", list, where)):
        message = _message(check(raw, dict, f"{where}.messages[{j}]"), f"{where}.messages[{j}]", f"path-{j}", previous, conv.created_at)
        conv.messages.append(message)
        previous = message.key
    conv.selected = previous
    for j, raw in enumerate(get(item, "branches", list, where, default=[])):
        bw = f"{where}.branches[{j}]"
        message = _message(check(raw, dict, bw), bw, None, None, conv.created_at)
        if "parent" not in raw:
            raise ImportRefused(f"{bw}.parent: a message of a branch must name its parent")
        conv.messages.append(message)
    return conv


def _message(m: dict[str, Any], where: str, default_key: str | None, previous: str | None, created: float) -> ImportedMessage:
    key = get(m, "id", (int, str), where, default=default_key)
    if key is None:
        raise ImportRefused(f"{where}.id: a message of a branch must have an id")
    parent = get(m, "parent", (int, str), where, default=None) if "parent" in m else previous
    role = get(m, "role", str, where)
    if role not in ROLES:
        raise ImportRefused(f"{where}.role: {role!r} is not one of {', '.join(ROLES)}")
    state = get(m, "state", str, where, default=st.COMPLETE)
    if state not in STATES:
        raise ImportRefused(f"{where}.state: {state!r} is not one of {', '.join(STATES)}")
    stats = get(m, "stats", dict, where, default=None)
    return ImportedMessage(
        str(key), str(parent) if parent is not None else None, role, get(m, "content", str, where),
        timestamp(m, "created_at", where, created), get(m, "model", str, where, default=""), STATES[state],
        from_stored_form(stats, 0) if stats is not None else None,
        get(m, "reasoning", str, where, default=""), float(not_negative(m, "thinking_ms", float, where)),
        _each(m, "attachments", _attachment, where), _each(m, "citations", _citation, where),
    )


def _each(m: dict[str, Any], key: str, read: Callable[[dict[str, Any], str], T], where: str) -> list[T]:
    """Each object of the list m[key] (none if it is missing), read by `read`."""
    return [read(check(raw, dict, f"{where}.{key}[{i}]"), f"{where}.{key}[{i}]") for i, raw in enumerate(get(m, key, list, where, default=[]))]


def _attachment(a: dict[str, Any], where: str) -> StoredAttachment:
    kind = get(a, "kind", str, where)
    if kind not in KINDS:
        raise ImportRefused(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    return StoredAttachment(get(a, "sha256", str, where), kind, get(a, "name", str, where), get(a, "mime", str, where, default=""),
                            not_negative(a, "size", int, where))


def _citation(c: dict[str, Any], where: str) -> StoredCitation:
    place = [not_negative(c, key, int, where) for key in ("page", "last_page", "first_line", "last_line")]
    return StoredCitation(get(c, "sha256", str, where), get(c, "name", str, where), not_negative(c, "chunk", int, where),
                          get(c, "where", str, where), get(c, "text", str, where), *place)
