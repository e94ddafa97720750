"""A conversation as Markdown (to read) or JSON (to process), with its settings and each reply's figures.

Markdown holds the path on screen (the selected branch). JSON holds the whole tree: `messages` is the
path on screen, as version 1 of the format always had it, and `branches` every other message; each
message names its `id` and its `parent` (null for a first message), so a reader that knows only
`messages` still reads the conversation as it was shown, and Lokal's import rebuilds every branch.
A reply's thinking goes with it, apart from its answer: a folded, quoted block above the answer in
Markdown, `reasoning` (and `thinking_ms`) beside `content` in JSON.
A message's attachments and a reply's citations go too, as what they are, never the files' bytes: a line
under the message naming the files (or the places cited) in Markdown; in JSON, `attachments` (name, kind,
MIME type, size and sha256) and `citations` (document, place and the text the reply was given). Both are
additions to version 1: a reader that does not know them reads the rest as before.
Lokal's import (app/importing/lokal.py) keeps the thinking and the citations, and attaches again the files
this computer's Lokal keeps (by sha256); it cannot attach the others (no bytes are here), and says how many.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from app.attachments.words import citation_title
from app.chat.words import speaker_name, state_word, thinking_caption
from app.storage import store as st
from app.storage.attachments import StoredAttachment, StoredCitation
from app.storage.reply_record import stored_form
from app.storage.store import Conversation, Message
from app.ui.language import Context
from runtime.private_files import user_umask

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
        lines += [heading, ""]
        if msg.reasoning.strip():
            # Folded as the window shows it (GitHub and most Markdown viewers render <details>), quoted apart from the answer.
            lines += ["<details>", f"<summary>{thinking_caption(False, msg.thinking_ms)}</summary>", "",
                      "> " + msg.reasoning.strip().replace("\n", "\n> "), "", "</details>", ""]
        lines += [msg.content.rstrip(), ""]
        if msg.attachments:
            lines += ["**" + Export.tr("Attached:") + "** " + ", ".join(_escaped(a.name) for a in msg.attachments), ""]
        if msg.citations:
            lines += ["**" + Export.tr("Sources:") + "** " + "; ".join(_escaped(citation_title(c)) for c in msg.citations), ""]
    return "\n".join(lines).rstrip() + "\n"


def _escaped(text: str) -> str:
    """A file name as plain text in Markdown: `my_notes_v2.md` must not turn into emphasis, nor `[1]` into a link."""
    return "".join("\\" + ch if ch in "\\`*_[]<>#|" else ch for ch in text)


def _attachment(a: StoredAttachment) -> dict[str, object]:
    return {"name": a.name, "kind": a.kind, "mime": a.mime, "size": a.size, "sha256": a.id}


def _citation(c: StoredCitation) -> dict[str, object]:
    return {"name": c.name, "where": c.where, "chunk": c.chunk, "text": c.text, "sha256": c.attachment_id,
            "page": c.page, "last_page": c.last_page, "first_line": c.first_line, "last_line": c.last_line}


def _message(m: Message) -> dict[str, object]:
    return {
        "id": m.id, "parent": m.parent_id, "role": m.role, "content": m.content, "reasoning": m.reasoning, "thinking_ms": m.thinking_ms,
        "state": m.state, "created_at": m.created_at,
        "model": m.model, "stats": stored_form(m.record) if m.record is not None else None,
        "attachments": [_attachment(a) for a in m.attachments], "citations": [_citation(c) for c in m.citations],
    }


def to_json(conv: Conversation, messages: list[Message], branches: list[Message] | None = None) -> str:
    """`messages`: the path on screen; `branches`: the conversation's other messages (see the module docstring)."""
    data = {
        "format": "lokal.conversation/1",
        "id": conv.id,
        "title": conv.title,
        "created_at": conv.created_at,
        "updated_at": conv.updated_at,
        "system_prompt": conv.system_prompt,
        "settings": conv.settings,
        "messages": [_message(m) for m in messages],
        "branches": [_message(m) for m in branches or []],
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def save(path: str | Path, text: str) -> None:
    """Write an export where the user chose, with the mode their umask gives (0644 under the usual 022).

    Lokal's own files are private (runtime/private_files.py), and a process that restricted its umask
    would make exports private too; an export is the user's file, shared as they share their others.
    """
    new = not os.path.exists(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    if new and os.name == "posix":
        os.fchmod(fd, 0o666 & ~user_umask())  # the process's umask may be narrower than the user's; a file saved over keeps its mode
    with open(fd, "w", encoding="utf-8") as f:
        f.write(text)
