"""ChatGPT's data export, conversations.json: a list of conversations, each a tree in `mapping`.

Each node of `mapping` has `parent`, `children` and a `message` (null for the root) with `author.role`,
`create_time` and `content` (`content_type` "text" or "multimodal_text" with `parts`, "code" with
`text`); `current_node` is the leaf the user saw last. Nodes Lokal does not keep (the hidden root, tool
calls and their output, the model's thoughts, images) are left out, and their children hang from the
nearest ancestor that was kept. A system message's text becomes the conversation's system prompt.
Format as read by OpenAI's own export and documented by the tools that read it (see tests/app/importing/data/README.md).
"""

from __future__ import annotations

import time
from typing import Any

from app.importing.conversation import ImportedConversation, ImportedMessage, ImportRefused
from app.importing.reading import check, get, timestamp

TEXT_TYPES = ("text", "multimodal_text")


def recognises(data: object) -> bool:
    return isinstance(data, list) and bool(data) and all(isinstance(c, dict) and "mapping" in c for c in data)


def read(data: Any) -> list[ImportedConversation]:
    return [_conversation(check(c, dict, f"[{i}]"), f"[{i}]") for i, c in enumerate(data)]


def _conversation(c: dict[str, Any], where: str) -> ImportedConversation:
    now = time.time()
    created = timestamp(c, "create_time", where, now)
    conv = ImportedConversation("chatgpt", where, get(c, "title", str, where, default="") or "ChatGPT chat", created, timestamp(c, "update_time", where, created))
    mapping = get(c, "mapping", dict, where)
    parent_of: dict[str, str | None] = {}
    kept: dict[str, ImportedMessage] = {}
    for node_id, node in mapping.items():
        nw = f"{where}.mapping.{node_id}"
        node = check(node, dict, nw)
        parent_of[node_id] = get(node, "parent", str, nw, default=None)
        message = get(node, "message", dict, nw, default=None)
        if message is None:
            continue
        mw = f"{nw}.message"
        role = get(get(message, "author", dict, mw), "role", str, f"{mw}.author")
        text = _text(get(message, "content", dict, mw), f"{mw}.content")
        metadata = get(message, "metadata", dict, mw, default={})
        if not text.strip() or metadata.get("is_visually_hidden_from_conversation") is True:
            continue
        if role == "system":
            conv.system_prompt = conv.system_prompt or text
            continue
        if role not in ("user", "assistant"):
            continue  # tool calls and their output
        model = get(metadata, "model_slug", str, f"{mw}.metadata", default="")
        kept[node_id] = ImportedMessage(node_id, None, role, text, timestamp(message, "create_time", mw, created), model)
    for node_id, message in kept.items():
        message.parent = _kept_ancestor(parent_of.get(node_id), parent_of, kept, f"{where}.mapping.{node_id}")
    conv.messages = list(kept.values())
    current = get(c, "current_node", str, where, default=None)
    if current is not None:
        conv.selected = current if current in kept else _kept_ancestor(parent_of.get(current), parent_of, kept, f"{where}.current_node")
    return conv


def _text(content: dict[str, Any], where: str) -> str:
    content_type = get(content, "content_type", str, where)
    if content_type in TEXT_TYPES:
        parts = get(content, "parts", list, where, default=[])
        return "\n".join(p for p in parts if isinstance(p, str))  # the others are images and files
    if content_type == "code":
        return "```\n" + get(content, "text", str, where, default="") + "\n```"
    return ""  # thoughts, browsing, tool output: not a message of the conversation


def _kept_ancestor(node: str | None, parent_of: dict[str, str | None], kept: dict[str, ImportedMessage], where: str) -> str | None:
    """The nearest node from `node` upwards that was kept; refuses a cycle and a parent that is not in `mapping`."""
    steps = 0
    while node is not None and node not in kept:
        if node not in parent_of:
            raise ImportRefused(f"{where}: the parent {node!r} is not in mapping")
        node = parent_of[node]
        steps += 1
        if steps > len(parent_of):
            raise ImportRefused(f"{where}: its parents form a cycle")
    return node
