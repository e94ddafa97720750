"""ChatGPT `conversations.json` exports of any size, in the shape of tests/app/importing/data/chatgpt-conversations.json."""

from __future__ import annotations

import json
from pathlib import Path

TEXT = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. " * 3


def write_chatgpt_export(path: Path, conversations: int, messages: int) -> Path:
    """`conversations` chats of `messages` alternating user and assistant messages each, one path from the root."""
    out = []
    for c in range(conversations):
        mapping: dict[str, dict] = {"root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}}
        for i in range(messages):
            message = {
                "id": f"m{i}", "author": {"role": "user" if i % 2 == 0 else "assistant", "name": None, "metadata": {}},
                "create_time": 1714000000.0 + i, "update_time": None, "content": {"content_type": "text", "parts": [f"{c}/{i} {TEXT}"]},
                "status": "finished_successfully", "end_turn": True, "weight": 1.0, "metadata": {}, "recipient": "all", "channel": None,
            }
            mapping[f"m{i}"] = {"id": f"m{i}", "message": message, "parent": "root" if i == 0 else f"m{i - 1}",
                                "children": [f"m{i + 1}"] if i + 1 < messages else []}
        out.append({"title": f"Conversation {c}", "create_time": 1714000000.0 + c, "update_time": 1714000000.0 + c, "mapping": mapping,
                    "current_node": f"m{messages - 1}", "id": f"conv-{c}", "conversation_id": f"conv-{c}", "default_model_slug": "gpt-4o"})
    path.write_text(json.dumps(out), encoding="utf-8")
    return path
