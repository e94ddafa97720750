"""An LM Studio conversation file (its `conversations/*.conversation.json`): `messages` in order, each with its
`versions` (a regenerated reply, an edited message) and the one `currentlySelected`. A user version is
`singleStep` with `content` blocks; an assistant version is `multiStep` with `steps` whose `contentBlock`s
hold `content` blocks, and names its model in `senderInfo.senderName`. A reasoning model's thinking is a
`contentBlock` of its own whose `style` is `{"type": "thinking", "title": "Thought for 19.35 seconds"}`: it
becomes the reply's thinking, folded above it with how long it took, not part of its answer. The versions
become siblings; the messages after one hang from the selected version, as LM Studio showed them. LM Studio
is closed source: the format is as its files are read by YorkieDev/lm-studio-conversation-converter
(script.js), and the thinking step as public readers and writers of these files have it.
"""

from __future__ import annotations

import re
import time
from typing import Any

from app.importing.conversation import ImportedConversation, ImportedMessage, ImportRefused
from app.importing.reading import check, get, timestamp

SYSTEM_PROMPT_FIELD = "llm.prediction.systemPrompt"
# "Thought for 19.35 seconds", "Thought for 1 minute 5 seconds": the only record of how long it thought
THOUGHT_FOR = re.compile(r"(?:(?P<minutes>\d+)\s*minutes?\s*)?(?:(?P<seconds>\d+(?:\.\d+)?)\s*seconds?)?\s*$")


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
            text, reasoning, thinking_ms = _text(version, vw)
            # Times are the conversation's, in order: LM Studio keeps none per message.
            conv.messages.append(ImportedMessage(
                f"{j}.{k}", previous, role, text, created + j * 1e-3 + k * 1e-6, get(sender, "senderName", str, f"{vw}.senderInfo", default=""),
                reasoning=reasoning, thinking_ms=thinking_ms,
            ))
        previous = f"{j}.{selected}"
    conv.selected = previous
    return [conv]


def _text(version: dict[str, Any], where: str) -> tuple[str, str, float]:
    """(the answer, the thinking, how long it thought in milliseconds) of one version."""
    if get(version, "type", str, where, default="singleStep") != "multiStep":
        return _blocks(get(version, "content", list, where), f"{where}.content"), "", 0.0
    answer, thought, thinking_ms = [], [], 0.0
    for i, raw in enumerate(get(version, "steps", list, where)):
        sw = f"{where}.steps[{i}]"
        step = check(raw, dict, sw)
        if step.get("type") != "contentBlock":
            continue  # tool status, debug information
        text = _blocks(get(step, "content", list, sw), f"{sw}.content")
        style = get(step, "style", dict, sw, default={})
        if get(style, "type", str, f"{sw}.style", default="") == "thinking":
            thought.append(text)
            thinking_ms += _thought_for(get(style, "title", str, f"{sw}.style", default=""))
        else:
            answer.append(text)
    return "\n".join(t for t in answer if t), "\n\n".join(t for t in thought if t), thinking_ms


def _thought_for(title: str) -> float:
    """Milliseconds from a thinking step's title; 0 where it says none."""
    said = THOUGHT_FOR.search(title)
    if said is None or not (said["minutes"] or said["seconds"]):
        return 0.0
    return (int(said["minutes"] or 0) * 60 + float(said["seconds"] or 0)) * 1000


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
