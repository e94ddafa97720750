"""Which seat a reply takes: a pure function of what each seat holds, testable without a model.

A seat is one of the context's n_seq KV sequences as the scheduler sees it
(scheduler.py). The choice: the seat its conversation rests in (or rested in, until
its cells were given up to the KV store while another reply decoded: the state is
restored there, beside its draft model's cache), else the resting seat whose cache
shares the most with its prompt (switching back to a recent conversation costs no
restore), else an empty one, else the one resting longest.
Caches are kept apart by owner (the protocol client, the API): a reply never
reuses a cache another owner made. When both owners have asked for replies,
neither may hold every seat, so neither ever waits for the other to finish.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Sequence

from runtime.llama.token_alignment import align, common_prefix

MIN_REUSE_TOKENS = 32  # below this, a fresh seat is better than another conversation's cache


@dataclass(frozen=True)
class SeatView:
    """What the choice reads of one seat."""

    tokens: Sequence[int]  # the ids its cache holds
    owner: str | None  # whose cache it is (None: never used)
    conversation_id: str
    last_used: float  # when its last reply ended (monotonic; 0: never)
    busy_with: str | None = None  # the owner of the reply streaming in it, or over and still being followed up
    held: bool = False  # its reply is over, and the next turn's start is still to be evaluated in it
    released: bool = False  # its cells were given up to the KV store; its conversation is restored here


@dataclass(frozen=True)
class Seeker:
    """The reply looking for a seat."""

    owner: str
    conversation_id: str
    prompt: Sequence[int]


def choose_seat(
    seats: Sequence[SeatView],
    reply: Seeker,
    owners_seen: Collection[str],
    piece: Callable[[int], bytes],
    dry_run: bool = False,
) -> int | None:
    """The index of the seat `reply` should take, or None: it waits.

    `owners_seen`: the owners that have asked for replies since the model loaded. `piece(token)`: the
    token's bytes, special tokens as their text (token_alignment.align). `dry_run`: whether it would
    wait at all (the prompts are not compared; a seat held for a moment does not count).
    """
    resting = [i for i, seat in enumerate(seats) if seat.busy_with is None]
    if not resting:
        return None
    mine = sum(1 for seat in seats if seat.busy_with == reply.owner)
    others = any(owner != reply.owner for owner in owners_seen)
    if others and len(seats) >= 2 and mine >= len(seats) - 1:
        return None  # the other owner keeps a seat of its own
    if dry_run:
        return resting[0]
    if any(seat.held and seat.owner == reply.owner and seat.conversation_id == reply.conversation_id for seat in seats):
        return None  # its conversation's cache is still being finished: it rests there in a moment
    best, best_shared = None, 0
    for i in resting:
        seat = seats[i]
        if seat.released and seat.owner == reply.owner and seat.conversation_id == reply.conversation_id:
            return i  # its conversation's seat, emptied for the KV store: the restore lands where its draft cache is
        if seat.owner == reply.owner and seat.tokens:
            shared = common_prefix(seat.tokens, align(seat.tokens, reply.prompt, piece))
            if seat.conversation_id == reply.conversation_id and shared:
                return i  # its own conversation's cache (a next turn, a regenerate, an edit)
            if shared > best_shared:
                best, best_shared = i, shared
    # Seats never used first, then those emptied for the KV store, the one resting longest first: the
    # conversation that rested in one comes back there, where its draft model's cache is.
    empty = sorted((i for i in resting if not seats[i].tokens), key=lambda i: (seats[i].released, seats[i].last_used if seats[i].released else 0.0))
    if best is not None and (best_shared >= MIN_REUSE_TOKENS or not empty):
        return best
    if empty:
        return empty[0]
    return min(resting, key=lambda i: seats[i].last_used)
