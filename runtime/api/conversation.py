"""A stable conversation id for stateless API requests.

The OpenAI API sends the whole history with every turn and no conversation id.
A conversation is recognised by its prefix: everything up to and including the
first user message stays the same from one turn to the next, so its hash names
the conversation. The engine's KV prefix reuse needs no id; the id is for what
keys on it (saved conversation states, the runtime's logs and metrics).
"""

from __future__ import annotations

import hashlib
import json
from typing import Sequence

from runtime.protocol import ChatMessage

# A raw prompt grows at its end from one call to the next; its opening names it.
RAW_PREFIX_CHARS = 256


def chat_conversation_id(messages: Sequence[ChatMessage]) -> str:
    prefix = []
    for message in messages:
        # A message's files and pictures are part of it: the same question about another file is another conversation.
        attached = [[a.id for a in message.attachments]] if message.attachments else []
        prefix.append([message.role, message.content, *attached])
        if message.role == "user":
            break
    return "api-chat-" + _digest(json.dumps(prefix, ensure_ascii=False))


def text_conversation_id(prompt: str) -> str:
    return "api-text-" + _digest(prompt[:RAW_PREFIX_CHARS])


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
