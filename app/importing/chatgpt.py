"""ChatGPT's data export, conversations.json: a list of conversations, each a tree in `mapping`.

Each node of `mapping` has `parent`, `children` and a `message` (null for the root) with `author.role`,
`create_time` and `content` (`content_type` "text" or "multimodal_text" with `parts`, "code" with
`text`); `current_node` is the leaf the user saw last. Nodes Lokal does not keep (the hidden root, tool
calls and their output, images) are left out, and their children hang from the nearest ancestor that was
kept. A system message's text becomes the conversation's system prompt.

A reasoning model's thinking comes as nodes of its own before the reply: "thoughts" (`thoughts`, each a
`summary` and its `content`) and a "reasoning_recap" ("Thought for 1m 1s"). They become the reply's
thinking, shown folded above it with how long it took, as a reply that thought in Lokal. OpenAI changes
their shape from model to model, so a thought that is not text is passed over rather than refused.
Format as read by OpenAI's own export and documented by the tools that read it (see tests/app/importing/data/README.md).
"""

from __future__ import annotations

import re
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
    thinking: dict[str, tuple[str, float]] = {}  # left-out nodes that are a reply's thinking: (its text, milliseconds)
    for node_id, node in mapping.items():
        nw = f"{where}.mapping.{node_id}"
        node = check(node, dict, nw)
        parent_of[node_id] = get(node, "parent", str, nw, default=None)
        message = get(node, "message", dict, nw, default=None)
        if message is None:
            continue
        mw = f"{nw}.message"
        role = get(get(message, "author", dict, mw), "role", str, f"{mw}.author")
        content = get(message, "content", dict, mw)
        if role == "assistant" and content.get("content_type") in THINKING_TYPES:
            thinking[node_id] = _thinking(content)
            continue
        text = _text(content, f"{mw}.content")
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
        if message.role == "assistant":
            message.reasoning, message.thinking_ms = _thought_before(node_id, parent_of, kept, thinking)
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


THINKING_TYPES = ("thoughts", "reasoning_recap")
_MINUTES = re.compile(r"(\d+)\s*m(?:in(?:ute)?s?)?\b")
_SECONDS = re.compile(r"(\d+)\s*s(?:ec(?:ond)?s?)?\b")


def _thinking(content: dict[str, Any]) -> tuple[str, float]:
    """(the text, the milliseconds) of a "thoughts" or "reasoning_recap" node's content."""
    if content.get("content_type") == "reasoning_recap":
        recap = content.get("content")
        if not isinstance(recap, str):
            return "", 0.0
        minutes, seconds = _MINUTES.search(recap), _SECONDS.search(recap)
        return "", 1000.0 * (60 * int(minutes[1] if minutes else 0) + int(seconds[1] if seconds else 0))
    parts = []
    for thought in content.get("thoughts") or []:
        if not isinstance(thought, dict):
            continue
        summary, body = thought.get("summary"), thought.get("content")
        lines = ([f"**{summary.strip()}**"] if isinstance(summary, str) and summary.strip() else []) + ([body.strip()] if isinstance(body, str) and body.strip() else [])
        if lines:
            parts.append("\n\n".join(lines))
    return "\n\n".join(parts), 0.0


def _thought_before(node: str, parent_of: dict[str, str | None], kept: dict[str, ImportedMessage], thinking: dict[str, tuple[str, float]]) -> tuple[str, float]:
    """The thinking of the left-out nodes between a reply and the message it answers, in the order it was thought."""
    texts: list[str] = []
    ms = 0.0
    above = parent_of.get(node)
    while above is not None and above not in kept:  # _kept_ancestor refused a cycle or a missing parent already
        text, took = thinking.get(above, ("", 0.0))
        if text:
            texts.append(text)
        ms += took
        above = parent_of.get(above)
    return "\n\n".join(reversed(texts)), ms


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
