"""An LM Studio conversation file (its `conversations/*.conversation.json`): `messages` in order, each with its
`versions` (a regenerated reply, an edited message) and the one `currentlySelected`. A user version is
`singleStep` with `content` blocks; an assistant version is `multiStep` with `steps` whose `contentBlock`s
hold `content` blocks, and names its model in `senderInfo.senderName`. The versions become siblings; the
messages after one hang from the selected version, as LM Studio showed them. LM Studio is closed source:
the format is as its files are read by YorkieDev/lm-studio-conversation-converter (script.js).
"""

from __future__ import annotations

import time
from typing import Any

from app.importing.conversation import ImportedConversation, ImportedMessage, ImportRefused
from app.importing.reading import check, get, timestamp

SYSTEM_PROMPT_FIELD = "llm.prediction.systemPrompt"


def recognises(data: object) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return False
    first = data["messages"][0] if data["messages"] else None
    return (isinstance(first, dict) and "versions" in first) or ("createdAt" in data and "name" in data)


def read(data: Any) -> list[ImportedConversation]:
    where = "the file"
    created = timestamp(data, "createdAt", where, time.time(), millis=True)
    conv = ImportedConversation("lmstudio", where, get(data, "name", str, where, default="") or "LM Studio chat", created, created)
    conv.system_prompt = get(data, "systemPrompt", str, where, default="") or _system_prompt(data, where)
    previous: str | None = None
    for j, raw in enumerate(get(data, "messages", list, where)):
        mw = f"{where}.messages[{j}]"
        m = check(raw, dict, mw)
        versions = get(m, "versions", list, mw)
        if not versions:
            raise ImportRefused(f"{mw}.versions: a message needs at least one version")
        selected = get(m, "currentlySelected", int, mw, default=0)
        if not 0 <= selected < len(versions):
            raise ImportRefused(f"{mw}.currentlySelected: {selected} is not one of its {len(versions)} versions")
        for k, raw_version in enumerate(versions):
            vw = f"{mw}.versions[{k}]"
            version = check(raw_version, dict, vw)
            role = get(version, "role", str, vw)
            if role not in ("user", "assistant", "system"):
                raise ImportRefused(f"{vw}.role: {role!r} is not user, assistant or system")
            sender = get(version, "senderInfo", dict, vw, default={})
            # Times are the conversation's, in order: LM Studio keeps none per message.
            conv.messages.append(ImportedMessage(
                f"{j}.{k}", previous, role, _text(version, vw), created + j * 1e-3 + k * 1e-6, get(sender, "senderName", str, f"{vw}.senderInfo", default=""),
            ))
        previous = f"{j}.{selected}"
    conv.selected = previous
    return [conv]


def _text(version: dict[str, Any], where: str) -> str:
    if get(version, "type", str, where, default="singleStep") == "multiStep":
        texts = []
        for i, raw in enumerate(get(version, "steps", list, where)):
            step = check(raw, dict, f"{where}.steps[{i}]")
            if step.get("type") == "contentBlock":
                texts.append(_blocks(get(step, "content", list, f"{where}.steps[{i}]"), f"{where}.steps[{i}].content"))
        return "\n".join(t for t in texts if t)
    return _blocks(get(version, "content", list, where), f"{where}.content")


def _blocks(blocks: list[Any], where: str) -> str:
    texts = []
    for i, raw in enumerate(blocks):
        block = check(raw, dict, f"{where}[{i}]")
        if block.get("type") == "text":
            texts.append(get(block, "text", str, f"{where}[{i}]"))
    return "\n".join(texts)


def _system_prompt(data: dict[str, Any], where: str) -> str:
    config = get(data, "perChatPredictionConfig", dict, where, default={})
    for i, raw in enumerate(get(config, "fields", list, f"{where}.perChatPredictionConfig", default=[])):
        entry = check(raw, dict, f"{where}.perChatPredictionConfig.fields[{i}]")
        if entry.get("key") == SYSTEM_PROMPT_FIELD:
            return str(get(entry, "value", str, f"{where}.perChatPredictionConfig.fields[{i}]", default=""))
    return ""
