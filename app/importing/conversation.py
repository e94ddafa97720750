"""What every format is read into, before it is written: a tree of messages named by the source's own keys.

The readers (lokal.py, chatgpt.py, lmstudio.py, openwebui.py) only read; `to_new` checks the tree (every
parent there, no cycle) and orders it parents first, as the store writes it.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict, deque
from dataclasses import dataclass, field

from app.storage.attachments import StoredAttachment, StoredCitation
from app.storage.reply_record import ReplyRecord
from app.storage.store import COMPLETE, NewConversation, TreeMessage

ROLES = ("system", "user", "assistant")


class ImportRefused(ValueError):
    """The file cannot be imported, and nothing of it was: the message says what is wrong, and where."""


@dataclass
class ImportedMessage:
    key: str
    parent: str | None
    role: str
    content: str
    created_at: float
    model: str = ""
    state: str = COMPLETE
    record: ReplyRecord | None = None
    reasoning: str = ""  # a reply's thinking: Lokal's export, Open WebUI's reasoning blocks, ChatGPT's thoughts, LM Studio's thinking steps
    thinking_ms: float = 0.0
    attachments: list[StoredAttachment] = field(default_factory=list)  # as the file names them: no bytes
    citations: list[StoredCitation] = field(default_factory=list)
    # The content an earlier Lokal named this message by (content_key), where it now reads the file otherwise:
    # Open WebUI's reply with its thinking still in it, before the thinking was read apart.
    keyed_as: str | None = None


@dataclass
class ImportedConversation:
    source: str  # the format: "lokal", "chatgpt", "lmstudio", "openwebui"
    where: str  # the conversation in the file, for errors ("[3]", "the file")
    title: str
    created_at: float
    updated_at: float
    messages: list[ImportedMessage] = field(default_factory=list)
    selected: str | None = None  # the key of the leaf shown last in the source; None: the newest
    system_prompt: str = ""
    settings: dict[str, object] = field(default_factory=dict)


def to_new(conv: ImportedConversation) -> NewConversation:
    """The conversation as the store writes it: parents first, siblings in the order written. Refuses a
    message whose parent is missing, keys used twice, and a cycle (messages no first message leads to)."""
    by_key: dict[str, ImportedMessage] = {}
    for m in conv.messages:
        if m.key in by_key:
            raise ImportRefused(f"{conv.where}: the message id {m.key!r} is used twice")
        by_key[m.key] = m
    children: dict[str | None, list[ImportedMessage]] = defaultdict(list)
    for m in conv.messages:
        if m.parent is not None and m.parent not in by_key:
            raise ImportRefused(f"{conv.where}: message {m.key!r} names a parent {m.parent!r} that is not in the conversation")
        children[m.parent].append(m)
    order: list[ImportedMessage] = []
    queue = deque(sorted(children[None], key=lambda m: m.created_at))
    while queue:  # breadth first, without recursion (a path may be thousands of messages long): parents come first
        m = queue.popleft()
        order.append(m)
        queue.extend(sorted(children[m.key], key=lambda c: c.created_at))
    if len(order) != len(conv.messages):
        raise ImportRefused(f"{conv.where}: {len(conv.messages) - len(order)} messages form a cycle (no first message leads to them)")
    index = {m.key: i for i, m in enumerate(order)}
    messages = [
        TreeMessage(m.role, m.content, index[m.parent] if m.parent is not None else None, m.created_at, m.state, m.model, m.record,
                    m.reasoning, m.thinking_ms, list(m.attachments), list(m.citations))
        for m in order
    ]
    selected = index.get(conv.selected) if conv.selected is not None else None
    if selected is not None and children[order[selected].key]:
        selected = None  # not a leaf: the newest message stands in
    earlier = [content_key(conv, order, earlier=True)] if any(m.keyed_as is not None for m in order) else []
    return NewConversation(
        conv.title, conv.created_at, conv.updated_at, messages, selected, content_key(conv, order), conv.system_prompt, dict(conv.settings), earlier,
    )


def content_key(conv: ImportedConversation, order: list[ImportedMessage], earlier: bool = False) -> str:
    """Names the conversation by its content: the same conversation imported again has the same key. `earlier`: the
    key an earlier Lokal gave it, from each message's content as it read it then (keyed_as)."""
    at = {m.key: i for i, m in enumerate(order)}
    content = lambda m: m.keyed_as if earlier and m.keyed_as is not None else m.content  # noqa: E731
    body = [conv.source, conv.title, conv.system_prompt, [(m.role, content(m), at[m.parent] if m.parent is not None else -1) for m in order]]
    return hashlib.sha256(json.dumps(body, ensure_ascii=False).encode()).hexdigest()
