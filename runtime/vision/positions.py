"""A picture's place in a token list: one negative id per position it takes, the same id for all of them.

Prompts, KV sequences and saved states are lists of token ids compared by value (the longest common
prefix is what a cache reuses). A picture evaluated into a sequence takes `n_pos` positions that have
no token id; they are written as `image_token(id)`, a negative number derived from the sha256 of the
picture's bytes. So the same picture in the next turn matches the cached positions (and a saved
state restores them), a different one does not, and no id can be mistaken for a vocabulary token.
The id fits int32, as saved states store ids; two pictures share an id once in 2**30.
"""

from __future__ import annotations

import struct
from typing import Sequence

_SPAN = 1 << 30


def image_token(image_id: str) -> int:
    """The placeholder id of every position of the picture whose sha256 hex is `image_id` (-2 ... -(2**30 + 1))."""
    return -2 - int(image_id[:8], 16) % _SPAN


def is_image(token: int) -> bool:
    return token < -1  # -1 is llama.cpp's LLAMA_TOKEN_NULL, never in a list of ours


def has_images(tokens: Sequence[int]) -> bool:
    return any(t < -1 for t in tokens)


def run_length(tokens: Sequence[int], start: int = 0) -> int:
    """How many positions from `start` hold the same picture id as tokens[start]."""
    first = tokens[start]
    n = start
    while n < len(tokens) and tokens[n] == first:
        n += 1
    return n - start


def text_length(tokens: Sequence[int], start: int = 0, limit: int | None = None) -> int:
    """How many tokens from `start` are text (up to the next picture), at most `limit`."""
    end = len(tokens) if limit is None else min(len(tokens), start + limit)
    n = start
    while n < end and not tokens[n] < -1:
        n += 1
    return n - start


def whole_images(tokens: Sequence[int], n: int) -> int:
    """`n`, moved back to the start of a picture when it falls inside one: a picture is evaluated whole or not at all."""
    if 0 < n < len(tokens) and tokens[n] < -1 and tokens[n - 1] == tokens[n]:
        while n > 0 and tokens[n - 1] == tokens[n]:
            n -= 1
    return n


def piece(token: int) -> bytes:
    """The bytes a picture position stands for when prompts are aligned as text (token_alignment.align): bytes no
    text spells (0xFF never occurs in UTF-8), different for each picture, so a picture only ever matches itself."""
    return b"\xff\xfe" + struct.pack("<i", token)
