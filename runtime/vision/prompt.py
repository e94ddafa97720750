"""Pictures in a rendered prompt: a marker in the message text where each goes, then its ids spliced in there.

The chat template renders text only, so a message's pictures enter it as markers in its content
(before the text, as people put a picture above the question); the template places the content
where it places any, and the rendered text is then tokenized piece by piece between the markers,
each marker replaced by the ids the projector gives its picture (projector.py: the projector's own
text around the picture and the placeholder run). A marker names the picture's sha256, so the
prompt carries everything needed to find its bytes again. The marker's delimiter is a private-use
character that is taken out of message text, so no message can forge one.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Sequence

from runtime.protocol import ChatMessage
from runtime.vision.image_bytes import ImageError
from runtime.vision.projector import Projector

DELIMITER = "\ue001"
MARKER = re.compile(DELIMITER + r"lokal-image:([0-9a-f]{64})" + DELIMITER)
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


class NoVision(Exception):
    """The prompt holds a picture and the loaded model has no projector."""


def has_pictures(messages: Sequence[ChatMessage]) -> bool:
    return any(a.kind == "image" for m in messages for a in m.attachments)


def with_markers(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages with a marker for each attached picture at the start of the content (others unchanged)."""
    out = []
    for message in messages:
        pictures = [a for a in message.attachments if a.kind == "image"]
        text = message.content.replace(DELIMITER, "") if DELIMITER in message.content else message.content
        if pictures:
            text = "".join(marker(a.id) for a in pictures) + text
        out.append(dataclasses.replace(message, content=text) if text is not message.content else message)
    return out


def marker(image_id: str) -> str:
    if not SHA256_HEX.match(image_id):
        raise ImageError(f"{image_id[:80]!r} is not an image id (the sha256 hex of its bytes)")
    return f"{DELIMITER}lokal-image:{image_id}{DELIMITER}"


def tokenize(
    text: str,
    tokenize_text: Callable[[str, bool], list[int]],
    projector: Projector | None,
    image_bytes: Callable[[str], bytes],
) -> list[int]:
    """Token ids of rendered `text`, pictures spliced in at their markers. `tokenize_text(piece, first)` tokenizes
    one piece of text (`first`: the prompt's start, where a BOS may go); `image_bytes(id)` the picture's bytes.
    NoVision when there are pictures but no projector; ImageError for a picture that cannot be used."""
    pieces = MARKER.split(text)  # text, id, text, id, ..., text
    if len(pieces) == 1:
        return tokenize_text(text, True)
    if projector is None:
        raise NoVision()
    tokens: list[int] = []
    for i, piece in enumerate(pieces):
        if i % 2:
            tokens.extend(projector.tokens_for(piece, _bytes_of(piece, image_bytes)))
        elif piece or i == 0:  # the first piece even when empty: it holds the BOS a model may want
            tokens.extend(tokenize_text(piece, i == 0))
    return tokens


def _bytes_of(image_id: str, image_bytes: Callable[[str], bytes]) -> Callable[[], bytes]:
    return lambda: image_bytes(image_id)
