"""Open WebUI's chat export (Settings ▸ Chats ▸ Export chats, `chat-export-<ms>.json`): a list of chat rows
(`id`, `title`, `chat`, `created_at`/`updated_at` in seconds). `chat.history.messages` is the tree: each
message has `id`, `parentId`, `childrenIds`, `role`, `content` (text), `timestamp` (seconds) and, for a
reply, `model`; `chat.history.currentId` is the leaf shown. From open-webui/open-webui:
src/lib/components/chat/Settings/Chats.svelte (exportChats writes getAllChats' rows) and the message tree
its chat view walks (src/lib/components/chat/Messages.svelte).

A reply's thinking is inside its `content`, above the answer, as Open WebUI folds it: a block
`<details type="reasoning" done="true" duration="12">`, its `<summary>`, then the thinking with each line
quoted ("> "), HTML-escaped after quoting in newer versions (backend/open_webui/utils/middleware.py,
serialize_content_blocks). The import takes it apart, so it shows folded as "Thought for 12 s" above the
answer (as a reply thought in Lokal), not as raw HTML in it, and never goes back to the model as the answer.
"""

from __future__ import annotations

import html
import re
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
        raw = get(m, "content", str, mw, default="")
        content, reasoning, thinking_ms = split_thinking(raw) if role == "assistant" else (raw, "", 0.0)
        conv.messages.append(ImportedMessage(
            key, get(m, "parentId", str, mw, default=None), role, content, timestamp(m, "timestamp", mw, created), get(m, "model", str, mw, default=""),
            reasoning=reasoning, thinking_ms=thinking_ms,
            keyed_as=raw if reasoning else None,  # Lokal before 1ccc0d9 kept the thinking in the answer, and keyed it so
        ))
    conv.selected = get(history, "currentId", str, hw, default=None)
    return conv


_THINKING = re.compile(r'\s*<details type="reasoning"(?P<attributes>[^>]*)>\s*(?:<summary>.*?</summary>)?\n?(?P<quoted>.*?)\n?</details>\s*', re.DOTALL)
_DURATION = re.compile(r'\bduration="(?P<seconds>\d+(?:\.\d+)?)"')


def split_thinking(content: str) -> tuple[str, str, float]:
    """(the answer, the thinking, milliseconds thought) of a reply's content: the reasoning blocks it opens with
    taken out of it, unquoted (several, as a reply that thought again after a tool call: one after another)."""
    thoughts: list[str] = []
    seconds = 0.0
    at = 0
    while block := _THINKING.match(content, at):
        quoted = block["quoted"]
        if all(line.startswith("&gt;") for line in quoted.splitlines() if line):
            quoted = html.unescape(quoted)  # escaped after quoting: every line's "> " became "&gt; "
        thoughts.append("\n".join(line[2:] if line.startswith("> ") else line.removeprefix(">") for line in quoted.splitlines()))
        duration = _DURATION.search(block["attributes"])
        seconds += float(duration["seconds"]) if duration else 0.0
        at = block.end()
    if not thoughts:
        return content, "", 0.0
    return content[at:], "\n\n".join(thoughts), seconds * 1000
