"""A conversation as Markdown (to read) or JSON (to process), with its settings and each reply's figures."""

from __future__ import annotations

import json
import time

from app.storage.store import Conversation, Message

SPEAKERS = {"user": "You", "assistant": "Assistant", "system": "System"}


def to_markdown(conv: Conversation, messages: list[Message]) -> str:
    lines = [f"# {conv.title}", "", f"_Exported from Lokal on {time.strftime('%Y-%m-%d %H:%M')}_", ""]
    if conv.system_prompt.strip():
        lines += ["**System prompt:**", "", "> " + conv.system_prompt.strip().replace("\n", "\n> "), ""]
    for msg in messages:
        heading = f"## {SPEAKERS.get(msg.role, msg.role)}"
        if msg.state not in ("complete", "streaming"):
            heading += f" ({msg.state})"
        lines += [heading, "", msg.content.rstrip(), ""]
    return "\n".join(lines).rstrip() + "\n"


def to_json(conv: Conversation, messages: list[Message]) -> str:
    data = {
        "format": "lokal.conversation/1",
        "id": conv.id,
        "title": conv.title,
        "created_at": conv.created_at,
        "updated_at": conv.updated_at,
        "system_prompt": conv.system_prompt,
        "settings": conv.settings,
        "messages": [
            {"role": m.role, "content": m.content, "state": m.state, "created_at": m.created_at, "model": m.model, "stats": m.stats}
            for m in messages
        ],
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
