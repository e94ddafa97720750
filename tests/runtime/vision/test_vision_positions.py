"""A picture's placeholder positions in token lists: ids, runs, rewinding, alignment and prompt lookup."""

from __future__ import annotations

import hashlib

from runtime.llama.token_alignment import align
from runtime.speculative.lookup import NgramIndex
from runtime.vision import positions
from runtime.vision.positions import image_token

A = hashlib.sha256(b"picture a").hexdigest()
B = hashlib.sha256(b"picture b").hexdigest()


def test_a_picture_id_is_negative_fits_int32_and_differs_between_pictures():
    ids = {image_token(A), image_token(B), image_token("0" * 64), image_token("f" * 64)}
    assert len(ids) == 4
    assert all(-(2**31) <= t <= -2 and positions.is_image(t) for t in ids)
    assert not positions.is_image(0) and not positions.is_image(-1)  # -1 is llama.cpp's LLAMA_TOKEN_NULL


def test_a_rewind_that_falls_inside_a_picture_goes_back_to_its_start():
    a = image_token(A)
    prompt = [5, 6, a, a, a, a, 7, 8]
    assert [positions.whole_images(prompt, n) for n in range(len(prompt) + 1)] == [0, 1, 2, 2, 2, 2, 6, 7, 8]
    assert positions.run_length(prompt, 2) == 4 and positions.text_length(prompt, 0) == 2 and positions.text_length(prompt, 6) == 2


def test_aligning_prompts_never_takes_one_picture_for_another():
    """A cache holding picture A is not reused for a prompt with picture B in its place, however the text around them matches."""
    a, b = image_token(A), image_token(B)
    piece = lambda token: positions.piece(token) if token < 0 else {5: b"he", 6: b"llo", 7: b"hel", 8: b"lo"}[token]
    assert align([a, a, 5, 6], [b, b, 7, 8], piece) == [b, b, 7, 8]
    assert align([a, a, 5, 6], [a, a, 7, 8], piece) == [a, a, 5, 6]  # the same picture and the same text: the cache's ids


def test_prompt_lookup_never_drafts_into_a_picture():
    a = image_token(A)
    index = NgramIndex()
    # "10 11" came before a picture and comes again at the end: its continuation would be the picture's positions.
    index.reset([1, 10, 11, a, a, a, 12, 13, 10, 11])
    assert index.match(8) is None
    index.reset([1, 10, 11, 12, a, a, 13, 10, 11])
    match = index.match(8)
    assert match is not None and match.continuation == [12]  # up to the picture, not into it
