"""Which seat a reply takes (seat_choice.choose_seat): plain data in, an index out; no model needed."""

from __future__ import annotations

from runtime.scheduler.seat_choice import MIN_REUSE_TOKENS, SeatView, Seeker, choose_seat


def piece(token: int) -> bytes:
    return f"<{token}>".encode()


def resting(tokens: list[int], owner: str | None = "protocol", conversation: str = "", last_used: float = 1.0) -> SeatView:
    return SeatView(tokens, owner, conversation, last_used)


def busy(owner: str) -> SeatView:
    return SeatView([1, 2, 3], owner, "busy", 1.0, busy_with=owner)


SYSTEM = list(range(100, 100 + MIN_REUSE_TOKENS))  # a system prompt long enough to be worth reusing


def ask(prompt: list[int], conversation: str = "c", owner: str = "protocol") -> Seeker:
    return Seeker(owner, conversation, prompt)


def test_a_reply_goes_back_to_its_own_conversations_seat_even_when_another_shares_more():
    seats = [resting([*SYSTEM, 1, 2, 3], conversation="other"), resting([*SYSTEM[:5], 9], conversation="c")]
    assert choose_seat(seats, ask([*SYSTEM, 1, 2, 3, 4]), {"protocol"}, piece) == 1


def test_a_conversation_whose_seat_gave_its_cells_to_the_store_is_restored_there_not_in_the_first_empty_seat():
    given_up = SeatView([], "protocol", "c", 1.0, released=True)
    seats = [resting([]), resting([*SYSTEM, 8], conversation="b"), given_up]
    # There, not in the empty seat, nor beside the cache sharing its system prompt: its draft model's cache is there.
    assert choose_seat(seats, ask([*SYSTEM, 1, 2]), {"protocol"}, piece) == 2
    # A new conversation takes a seat never used before one emptied for the store, and of those the one resting longest.
    newer = SeatView([], "protocol", "e", 7.0, released=True)
    assert choose_seat([given_up, newer, resting([], owner=None)], ask([5, 6], conversation="d"), {"protocol"}, piece) == 2
    assert choose_seat([newer, given_up], ask([5, 6], conversation="d"), {"protocol"}, piece) == 1


def test_the_resting_cache_that_shares_the_most_beats_an_empty_seat():
    seats = [resting([]), resting([*SYSTEM[:4], 7], conversation="a"), resting([*SYSTEM, 8], conversation="b")]
    assert choose_seat(seats, ask([*SYSTEM, 5]), {"protocol"}, piece) == 2


def test_a_little_shared_is_not_worth_another_conversations_cache_when_a_seat_is_empty():
    seats = [resting(SYSTEM[:4] + [7], conversation="a"), resting([])]
    assert choose_seat(seats, ask(SYSTEM[:4] + [5]), {"protocol"}, piece) == 1


def test_with_no_empty_seat_and_nothing_shared_the_one_resting_longest_is_taken():
    seats = [resting([1, 2], conversation="a", last_used=5.0), resting([3, 4], conversation="b", last_used=2.0), resting([5], conversation="d", last_used=9.0)]
    assert choose_seat(seats, ask([7, 8]), {"protocol"}, piece) == 1


def test_another_owners_cache_is_never_reused():
    seats = [resting([*SYSTEM, 1], owner="api", conversation="c", last_used=1.0), resting([9], owner="api", conversation="x", last_used=3.0)]
    # The same conversation id and the same tokens, but the API's: the least recently used seat is emptied instead.
    assert choose_seat(seats, ask([*SYSTEM, 1, 2]), {"protocol", "api"}, piece) == 0
    seats = [resting([*SYSTEM, 1], owner="api", conversation="c"), resting([])]
    assert choose_seat(seats, ask([*SYSTEM, 1, 2]), {"protocol", "api"}, piece) == 1


def test_every_seat_streaming_means_waiting():
    assert choose_seat([busy("protocol"), busy("api")], ask([1]), {"protocol", "api"}, piece) is None


def test_when_both_owners_have_asked_neither_takes_the_last_seat():
    seats = [busy("api"), busy("api"), resting([])]
    assert choose_seat(seats, ask([1], owner="api"), {"protocol", "api"}, piece) is None
    assert choose_seat(seats, ask([1], owner="protocol"), {"protocol", "api"}, piece) == 2
    # An owner alone may use every seat.
    assert choose_seat(seats, ask([1], owner="api"), {"api"}, piece) == 2


def test_a_conversation_whose_seat_is_still_being_finished_waits_for_it():
    held = SeatView([*SYSTEM, 1], "protocol", "c", 1.0, busy_with="protocol", held=True)
    seats = [held, resting([])]
    assert choose_seat(seats, ask([*SYSTEM, 1, 2]), {"protocol"}, piece) is None
    assert choose_seat(seats, ask([*SYSTEM, 1, 2]), {"protocol"}, piece, dry_run=True) == 1  # not worth a "waiting" notice
    assert choose_seat(seats, ask([*SYSTEM, 1, 2], conversation="other"), {"protocol"}, piece) == 1


def test_a_cache_spelled_with_other_ids_for_the_same_text_still_counts_as_shared():
    # The reply's ids spell "ab" as one token; the prompt tokenized afresh spells it as two (token_alignment.py).
    pieces = {1: b"a", 2: b"b", 3: b"ab", 4: b"c"}
    same = list(range(100, 100 + MIN_REUSE_TOKENS - 1))  # one id short of worth reusing; with "ab", enough
    seats = [resting([], conversation=""), resting([*same, 3], conversation="other")]
    prompt = [*same, 1, 2, 4]
    spell = lambda token: pieces.get(token, piece(token))
    assert choose_seat(seats, ask(prompt), {"protocol"}, spell) == 1
