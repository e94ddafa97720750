"""Reuse that survives re-tokenization: a prompt spelled with the ids already in a cache wherever the text is the same.

A reply is cached as the ids the model generated. When the conversation comes
back, its history is rendered as text and tokenized again, and for some
tokenizers (SmolLM2's on code, for one) the reply's text does not tokenize to
the ids that produced it: the prompt then shares only part of the reply with the
cache, and the rest of the reply and everything after it is evaluated again.

`align` compares the cached ids with the freshly tokenized prompt as bytes
rather than as ids. Past their common id prefix it walks both, piece by piece,
while their bytes agree, and notes every offset where both have a token
boundary. The prompt used is then the cached ids up to the last such boundary,
followed by the fresh ids from the same boundary on: the same text, each part a
valid tokenization of its own bytes, and a cache hit for everything the cache
holds of it. This needs no record of which ids were generated: the cache (the
live sequence, or a saved state from RAM or disk) is that record, and a text
that changed simply stops the walk where it changed.
"""

from __future__ import annotations

from typing import Callable, Sequence


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def align(cached: Sequence[int], prompt: Sequence[int], piece: Callable[[int], bytes]) -> list[int]:
    """`prompt` with its start spelled by `cached`'s ids as far as both spell the same bytes.

    `piece(token)` is the token's bytes, special tokens as their text (so that
    a special token only ever matches itself).
    """
    n = common_prefix(cached, prompt)
    if n == len(cached) or n == len(prompt):
        return list(prompt)
    i = j = n
    a, b = bytearray(), bytearray()  # the bytes of cached[n:i] and prompt[n:j]
    checked = 0  # leading bytes of a and b known to be equal
    best = (n, n)
    while True:
        if len(a) == len(b):
            if a:
                best = (i, j)  # both sides end a token at this byte offset, and agree up to it
            if i == len(cached) or j == len(prompt):
                break
            a += piece(cached[i])
            i += 1
        elif len(a) < len(b):
            if i == len(cached):
                break
            a += piece(cached[i])
            i += 1
        else:
            if j == len(prompt):
                break
            b += piece(prompt[j])
            j += 1
        m = min(len(a), len(b))
        if a[checked:m] != b[checked:m]:
            break
        checked = m
    i, j = best
    if i == n:
        return list(prompt)
    return list(cached[:i]) + list(prompt[j:])
