"""Open WebUI's chat export (Settings ▸ Chats ▸ Export chats, `chat-export-<ms>.json`): a list of chat rows
(`id`, `title`, `chat`, `created_at`/`updated_at` in seconds). `chat.history.messages` is the tree: each
message has `id`, `parentId`, `childrenIds`, `role`, `content` (text), `timestamp` (seconds) and, for a
reply, `model`; `chat.history.currentId` is the leaf shown. From open-webui/open-webui:
src/lib/components/chat/Settings/Chats.svelte (exportChats writes getAllChats' rows) and the message tree
its chat view walks (src/lib/components/chat/Messages.svelte).
"""

from __future__ import annotations

import time
from typing import Any

from app.importing.conversation import ImportedConversation, ImportedMessage, ImportRefused
from app.importing.reading import check, get, timestamp


def recognises(data: object) -> bool:
    rows = data if isinstance(data, list) else [data]
    return bool(rows) and all(isinstance(r, dict) and isinstance(r.get("chat", r).get("history") if isinstance(r.get("chat", r), dict) else None, dict) for r in rows)


def read(data: Any) -> list[ImportedConversation]:
    rows = data if isinstance(data, list) else [data]
    return [_conversation(check(r, dict, f"[{i}]"), f"[{i}]") for i, r in enumerate(rows)]


def _conversation(row: dict[str, Any], where: str) -> ImportedConversation:
    chat = get(row, "chat", dict, where, default=row)
    cw = f"{where}.chat" if chat is not row else where
    created = timestamp(row, "created_at", where, time.time())
    title = get(row, "title", str, where, default="") or get(chat, "title", str, cw, default="") or "Open WebUI chat"
    conv = ImportedConversation("openwebui", where, title, created, timestamp(row, "updated_at", where, created))
    history = get(chat, "history", dict, cw)
    hw = f"{cw}.history"
    for key, raw in get(history, "messages", dict, hw).items():
        mw = f"{hw}.messages.{key}"
        m = check(raw, dict, mw)
        role = get(m, "role", str, mw)
        if role not in ("user", "assistant", "system"):
            raise ImportRefused(f"{mw}.role: {role!r} is not user, assistant or system")
        content = get(m, "content", str, mw, default="")
        conv.messages.append(ImportedMessage(
            key, get(m, "parentId", str, mw, default=None), role, content, timestamp(m, "timestamp", mw, created), get(m, "model", str, mw, default=""),
        ))
    conv.selected = get(history, "currentId", str, hw, default=None)
    return conv
