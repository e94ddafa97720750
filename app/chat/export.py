"""A conversation as Markdown (to read) or JSON (to process), with its settings and each reply's figures."""

from __future__ import annotations

import json
import time

from app.chat.words import speaker_name, state_word
from app.storage import store as st
from app.storage.store import Conversation, Message
from app.ui.language import Context

Export = Context("Export")


def to_markdown(conv: Conversation, messages: list[Message]) -> str:
    """The conversation to read, in the window's language (headings: You, Assistant)."""
    exported = Export.tr("Exported from Lokal on {time}").format(time=time.strftime("%Y-%m-%d %H:%M"))
    lines = [f"# {conv.title}", "", f"_{exported}_", ""]
    if conv.system_prompt.strip():
        lines += ["**" + Export.tr("System prompt:") + "**", "", "> " + conv.system_prompt.strip().replace("\n", "\n> "), ""]
    for msg in messages:
        heading = f"## {speaker_name(msg.role)}"
        if msg.state not in (st.COMPLETE, st.STREAMING):
            heading += f" ({state_word(msg.state)})"
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
