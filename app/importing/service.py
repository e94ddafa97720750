"""Importing a file: which format it is, its conversations read and checked, then written all or nothing.

Nothing is written until the whole file was read and every conversation checked: a file with one bad
field imports nothing, and says which field. A conversation imported before (the same content, see
conversation.content_key) is skipped, so importing the same export twice adds nothing the second time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from app.importing import chatgpt, lmstudio, lokal, openwebui
from app.importing.conversation import ImportedConversation, ImportRefused, to_new
from app.importing.reading import read_json
from app.storage.store import Conversation, NewConversation, Store

Reader = Callable[[Any], list[ImportedConversation]]
# In the order they are tried: the first that recognises the file's shape reads it.
FORMATS: list[tuple[str, Callable[[object], bool], Reader]] = [
    ("Lokal", lokal.recognises, lokal.read),
    ("ChatGPT", chatgpt.recognises, chatgpt.read),
    ("Open WebUI", openwebui.recognises, openwebui.read),
    ("LM Studio", lmstudio.recognises, lmstudio.read),
]
# More conversations or messages than this in one file is no export of a person's chats.
MAX_CONVERSATIONS = 100_000
MAX_MESSAGES = 2_000_000


@dataclass
class ImportSummary:
    format: str
    added: list[Conversation] = field(default_factory=list)
    skipped: int = 0  # imported before
    messages: int = 0  # in the conversations added
    attachments_not_found: int = 0  # files the added messages name that this computer does not keep: not attached

    def told(self) -> ImportedInto:
        """The summary as `lokal import --json` prints it for the window: how many were added, and the first one's id."""
        return ImportedInto(self.format, len(self.added), self.added[0].id if self.added else None, self.skipped, self.messages,
                            self.attachments_not_found)


@dataclass
class ImportedInto:
    """An import's summary as it travels from `lokal import --json` to the window (one JSON object, these fields)."""

    format: str
    added: int
    first_added: str | None  # the first conversation added, in the file's order
    skipped: int
    messages: int
    attachments_not_found: int

    @classmethod
    def from_json(cls, data: object) -> ImportedInto:
        """ValueError unless `data` is one, as `dataclasses.asdict` wrote it."""
        if not isinstance(data, dict):
            raise ValueError(f"an import summary is an object, not {type(data).__name__}")
        counts = [data.get(k) for k in ("added", "skipped", "messages", "attachments_not_found")]
        first = data.get("first_added")
        if not isinstance(data.get("format"), str) or not (first is None or isinstance(first, str)):
            raise ValueError(f"not an import summary: {str(data)[:200]}")
        numbers = [n for n in counts if isinstance(n, int) and not isinstance(n, bool)]
        if len(numbers) != len(counts):
            raise ValueError(f"not an import summary: {str(data)[:200]}")
        added, skipped, messages, not_found = numbers
        return cls(data["format"], added, first, skipped, messages, not_found)


@dataclass
class ImportedSoFar:
    """How far an import got, as it travels from `lokal import --progress` to the window: {"progress": {"done", "total"}}."""

    done: int  # conversations written or skipped (0 once the file is read)
    total: int

    def to_json(self) -> dict[str, dict[str, int]]:
        return {"progress": {"done": self.done, "total": self.total}}

    @classmethod
    def from_json(cls, data: object) -> ImportedSoFar:
        """ValueError unless `data` is one, as to_json wrote it."""
        counts = data.get("progress") if isinstance(data, dict) else None
        done, total = (counts.get("done"), counts.get("total")) if isinstance(counts, dict) else (None, None)
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (done, total)):
            raise ValueError(f"not an import's progress: {str(data)[:200]}")
        return cls(int(done), int(total))  # type: ignore[arg-type]


def read_file(path: str | Path) -> tuple[str, list[ImportedConversation]]:
    """(the format's name, its conversations); ImportRefused says why a file cannot be imported."""
    data = read_json(path)
    for name, recognises, read in FORMATS:
        if recognises(data):
            conversations = read(data)
            break
    else:
        raise ImportRefused(
            f"{Path(path).name} is not a conversation export Lokal knows: it reads Lokal's JSON export, ChatGPT's "
            "conversations.json, an LM Studio conversation file and Open WebUI's chat export"
        )
    if len(conversations) > MAX_CONVERSATIONS:
        raise ImportRefused(f"{Path(path).name} holds {len(conversations):,} conversations; Lokal imports at most {MAX_CONVERSATIONS:,} at once")
    if sum(len(c.messages) for c in conversations) > MAX_MESSAGES:
        raise ImportRefused(f"{Path(path).name} holds more than {MAX_MESSAGES:,} messages; Lokal imports at most that many at once")
    return name, conversations


def import_file(
    store: Store, path: str | Path, on_progress: Callable[[int, int], None] | None = None, should_stop: Callable[[], bool] | None = None,
) -> ImportSummary:
    """Import every conversation of the file, or none (ImportRefused, or StoreUnavailable from the store; WriteStopped
    once `should_stop()`). `on_progress(done, total)`: (0, total) once the file is read, then as conversations are written."""
    name, conversations = read_file(path)
    new = [to_new(c) for c in conversations]
    if on_progress is not None:
        on_progress(0, len(new))
    return write(store, name, new, on_progress, should_stop)


def write(
    store: Store, name: str, new: list[NewConversation],
    on_progress: Callable[[int, int], None] | None = None, should_stop: Callable[[], bool] | None = None,
) -> ImportSummary:
    """Write what read_file gave (made ready by to_new), all or nothing (Store.add_conversations); StoreUnavailable if the database refuses."""
    added, skipped, not_found = store.add_conversations(new, on_progress, should_stop)
    messages = sum(len(n.messages) for n in new) - sum(len(n.messages) for n in skipped)
    return ImportSummary(name, added, len(skipped), messages, len(not_found))
