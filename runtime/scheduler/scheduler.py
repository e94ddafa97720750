"""Continuous batching: the replies of several conversations decoded together, one llama_decode call per step.

The model's context holds `n_seq` sequences (llama_model.py); each is a seat that
one conversation's KV cache lives in, streaming or resting between its turns.
One engine thread runs the loop: it admits waiting replies into seats in the
order they came, then builds each step's batch from every admitted reply (the
next token of each one that streams, with its speculative draft, and chunks of
new prompts in what the batch has left: chunked prefill, so a new prompt's time
to first token stays bounded while the others keep streaming; prompts sent
together are read whole, generation.decode_step), decodes it with one
llama_decode call and hands each reply its logits rows (generation.ReplyRun).

The loop runs one way, as llama.cpp's server and vLLM's scheduler do: what
comes in is data (`submit`, `cancel`, `follow_up`, `make_room`, taken at the top
of each pass), and what a step did goes out as data (StepOutput: each reply's
text, the replies that ended, the replies whose context is full). The loop hands
text to each reply's output channel (GenerationRequest.on_text, which never
blocks) and wakes its caller; it never calls back into the engine. Work that
needs the chat template (the next turn's start, a conversation refitted to the
context) happens on the callers' threads, which send the tokens back.

Replies that end in the same step are all answered before their after-work (the
next turn's start, sent by their callers and evaluated in one llama_decode call;
their states saved) begins. Until then a seat is held: no other reply sits in it.

Which seat a reply gets: seat_choice.py; the KV store on disk (runtime/kvstore)
covers conversations no seat holds any more, and those whose seat gave up its
cells while another reply decoded (`_release_resting`: resting caches slow every
token decoded beside them). A prompt that begins like another
sequence's cache (the same system prompt) shares those cells (KvSequence.share)
instead of computing them again; one that begins with most of a prompt being read
waits for that prefill to share it (`_prefix_being_read`: `n` choices of one prompt). A seat changing owner is emptied first.

Prompts sent together are read in one batch even though each is rendered on its
own thread first: a wave of prompts that would start while nothing streams waits
for the replies the server has accepted and not yet submitted (`expect`, from the
moment a request is taken in, and `arriving`, while its prompt is rendered), at
most GATHER_S after the first. Otherwise the first one was read alone and the
others, submitted 1 to 12 ms later, waited for it: four API clients at once read
one prompt of 14 tokens in 0.37 s, then three more in the next batch. A reply that
nothing else is known to be coming with starts at once: it used to wait for a
quiet moment of 10 ms in case another came, which every lone request paid in its
time to first token.

Everything that touches the llama.cpp context happens on the engine thread.

Naming: llama.cpp's server calls a sequence a "slot"; here that word is taken by
the server's job FIFO (runtime/job_slot.py), so the scheduler's is a `Seat`.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, NamedTuple, Protocol, Sequence

from runtime.llama.generation import GenerationOutcome, GenerationRequest, Phase, ReplyRun, StepperFactory, decode_step, hand_on
from runtime.llama.llama_model import LlamaModel, Slice
from runtime.llama.llama_model import KvSequence as Seq
from runtime.llama.token_alignment import align, common_prefix
from runtime.job_slot import PROTOCOL
from runtime.protocol import GenerationStats, RpcError, TokenLogprob
from runtime.scheduler.seat_choice import SeatView, Seeker, choose_seat

log = logging.getLogger("lokal.scheduler")

MIN_SHARED_TOKENS = 8  # a prefix another sequence holds is shared when it saves at least this many tokens
# A prompt waits for another being read that begins with at least this many of its tokens, then shares them.
MIN_AWAITED_PREFIX = 64
GATHER_S = 0.05  # the longest a new wave of prompts waits for more replies
MAX_NEXT_TURN_HEADER = 32  # tokens evaluated after a reply without being asked (a template's header is 3 to 10)


class SavedStates(Protocol):
    """The KV store's seam (runtime/kvstore/saved_states.py): a state restored before a prompt, saved after a reply."""

    def restore(self, model: Seq, prompt: Sequence[int], stats: GenerationStats, owner: str) -> list[int] | None: ...

    def save(self, model: Seq, conversation_id: str, owner: str) -> str | None: ...

    def holds(self, model: Seq, key: str) -> bool: ...


class RoomNeeded(NamedTuple):
    """To a reply's caller: the reply filled the context with `committed` tokens; answer with Scheduler.make_room."""

    committed: int


@dataclass(eq=False)
class ScheduledReply:
    """A reply handed to the scheduler, and what becomes of it."""

    request: GenerationRequest
    make_stepper: StepperFactory
    owner: str = PROTOCOL  # whose caches it may reuse (PROTOCOL or API, runtime/job_slot.py)
    conversation_id: str = ""
    stats: GenerationStats = field(default_factory=GenerationStats)
    # Its caller sends how every next turn of the conversation starts (Scheduler.follow_up) once it has the
    # outcome; the seat is held until then, and those tokens are evaluated now, while the user reads.
    follows_up: bool = False
    saves_state: bool = False  # its cache is saved for later (the scheduler's SavedStates) once it is over
    # Its cache serves no later prompt: emptied once it is over, as resting cells slow every step decoded beside them.
    drops_cells: bool = False
    cache_key: str = ""  # the saved state it extends (ChatGenerateParams.cache_key); "": its conversation's
    submitted: float = field(default_factory=time.perf_counter)
    done: threading.Event = field(default_factory=threading.Event)
    outcome: GenerationOutcome | None = None
    error: BaseException | None = None
    seq_id: int | None = None  # the seat it got
    admitted: float | None = None  # when it got it (perf_counter)
    # What its caller has to act on, in order: RoomNeeded, and None once it is over.
    news: queue.SimpleQueue[RoomNeeded | None] = field(default_factory=queue.SimpleQueue)

    def _end(self) -> None:
        self.done.set()
        self.news.put(None)


@dataclass(eq=False)
class Seat:
    """One of the context's sequences: whose cache it holds, and the reply streaming in it."""

    seq: Seq
    owner: str | None = None
    conversation_id: str = ""
    last_used: float = 0.0
    reply: ScheduledReply | None = None  # streaming
    run: ReplyRun | None = None
    held_for: ScheduledReply | None = None  # over, its after-work still to come: nobody else sits here
    saved_as: str = ""  # the KV store's key for a state holding exactly its cells ("": none known)
    released: int = 0  # its conversation's tokens, its cells given up to the KV store (Scheduler._release_resting)

    def view(self) -> SeatView:
        busy = self.reply or self.held_for
        return SeatView(
            self.seq.tokens, self.owner, self.conversation_id, self.last_used, busy.owner if busy is not None else None, self.held_for is not None, self.released > 0
        )


@dataclass
class StepOutput:
    """What one pass of the loop did, for the loop to hand out: text per reply, replies over, replies out of room."""

    texts: list[tuple[ScheduledReply, str, str, list[TokenLogprob]]] = field(default_factory=list)  # (reply, answer, reasoning, logprobs)
    ended: list[tuple[Seat, ScheduledReply]] = field(default_factory=list)
    room_needed: list[tuple[ScheduledReply, int]] = field(default_factory=list)


@dataclass(eq=False)
class _AfterWork:
    """The replies that ended in one step and still have after-work: each one's next-turn start, once its caller sent it."""

    seats: list[tuple[Seat, ScheduledReply]]
    next_turns: dict[int, Sequence[int]] = field(default_factory=dict)  # by id(reply)
    rewritten: dict[int, int] = field(default_factory=dict)  # by id(reply): its tokens the next turn writes anew (follow_up)
    waiting_for: set[int] = field(default_factory=set)  # id(reply) of the follow-ups still to come


class Scheduler:
    def __init__(self, llama: LlamaModel, states: SavedStates | None = None, gather_s: float = GATHER_S):
        self.llama = llama
        self.states = states
        self.seats = [Seat(seq) for seq in llama.sequences]
        self.gather_s = gather_s
        self._waiting: collections.deque[ScheduledReply] = collections.deque()
        self._arriving = 0  # replies accepted and not yet submitted (expect, arriving): a new wave waits for them
        self._owners_seen: set[str] = set()
        self._after: list[_AfterWork] = []  # under the lock
        self._refits: list[tuple[ScheduledReply, list[int] | None, int]] = []  # make_room answers, under the lock
        self._finishing = 0  # replies over whose after-work still runs
        self._changed = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="engine", daemon=True)
        self._thread.start()

    # ---- other threads -------------------------------------------------------
    def submit(self, reply: ScheduledReply) -> bool:
        """Queue a reply; True if it has to wait for a seat (every one it may take is streaming)."""
        with self._changed:
            if self._closing:
                raise RuntimeError("the scheduler is closed")
            self._owners_seen.add(reply.owner)
            self._waiting.append(reply)
            waits = self._seat_for(reply, dry_run=True) is None or len(self._waiting) > 1
            self._changed.notify_all()
        return waits

    def expect(self) -> Callable[[], None]:
        """A reply is on its way (the server took in its request; its prompt is not rendered yet): a wave of prompts
        about to start while nothing streams waits for it, so that it joins their batch. Call what this returns once
        the reply is submitted or will not be (more calls do nothing)."""
        with self._changed:
            self._arriving += 1
        released = False

        def release() -> None:
            nonlocal released
            with self._changed:
                if not released:
                    released = True
                    self._arriving -= 1
                    self._changed.notify_all()

        return release

    @property
    def expected(self) -> int:
        """Replies on their way (expect, arriving) and not yet submitted."""
        with self._changed:
            return self._arriving

    @contextlib.contextmanager
    def arriving(self) -> Iterator[None]:
        """Around the work before `submit` (rendering and fitting the prompt): `expect` for the time it takes."""
        release = self.expect()
        try:
            yield
        finally:
            release()

    def cancel(self, reply: ScheduledReply) -> None:
        reply.request.cancel.set()
        with self._changed:
            if reply in self._waiting:
                self._waiting.remove(reply)
                reply.stats.total_ms = (time.perf_counter() - reply.submitted) * 1000
                reply.outcome = GenerationOutcome("", "cancelled", reply.stats, [])
                reply._end()
            self._changed.notify_all()

    def follow_up(self, reply: ScheduledReply, next_turn: Sequence[int], rewritten: int = 0) -> None:
        """From the caller of a reply that `follows_up`, once it has the outcome: the tokens every next turn of the
        conversation starts with (the whole prompt so far; [] when there is nothing to evaluate). `rewritten`: how
        many of the reply's last tokens the next turn writes otherwise (its reasoning left out by the template):
        the cache may be rewound over them and their new form evaluated now, not in the next turn's time to first token."""
        with self._changed:
            for work in self._after:
                if id(reply) in work.waiting_for:
                    work.waiting_for.discard(id(reply))
                    work.next_turns[id(reply)] = next_turn
                    work.rewritten[id(reply)] = rewritten
                    self._changed.notify_all()
                    return

    def make_room(self, reply: ScheduledReply, prompt: list[int] | None, dropped: int) -> None:
        """The answer to RoomNeeded: the conversation refitted with the reply so far committed (None: it cannot be)."""
        with self._changed:
            self._refits.append((reply, prompt, dropped))
            self._changed.notify_all()

    def streaming(self, owner: str | None = None) -> list[ScheduledReply]:
        """The replies admitted and not yet over (of one owner, or all)."""
        with self._changed:
            return [s.reply for s in self.seats if s.reply is not None and (owner is None or s.reply.owner == owner)]

    def context_used(self, owner: str, conversation_id: str | None = None) -> int:
        """Tokens in the sequence of `owner`'s newest reply (of `conversation_id`'s, when given): the one
        streaming, else the last one; 0 when no seat holds that conversation now."""
        with self._changed:
            mine = [s for s in self.seats if s.owner == owner and (conversation_id is None or s.conversation_id == conversation_id)]
            streaming = [(s.reply.submitted, s) for s in mine if s.reply is not None]
            if streaming:
                return len(max(streaming, key=lambda pair: pair[0])[1].seq.tokens)
            rested = [s for s in mine if s.last_used]
            newest = max(rested, key=lambda s: s.last_used) if rested else None
            return (len(newest.seq.tokens) or newest.released) if newest is not None else 0

    def _idle(self) -> bool:
        return not self._waiting and not self._finishing and all(s.reply is None for s in self.seats)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no reply streams or waits and the last one's after-work (its state saved) is done."""
        with self._changed:
            return self._changed.wait_for(self._idle, timeout)

    def wait_after_work(self, timeout: float) -> bool:
        """Wait until the replies that are over have had their after-work done (their states handed to the store)."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._finishing, timeout)

    def close(self) -> None:
        """Cancel what is left and stop the engine thread (the model may be closed after this)."""
        with self._changed:
            self._closing = True
            waiting = list(self._waiting)
        for reply in waiting:
            self.cancel(reply)
        for reply in self.streaming():
            reply.request.cancel.set()
        with self._changed:
            self._changed.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join()

    # ---- the engine thread -----------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._changed:
                while not self._has_work():
                    self._changed.wait()
                if self._closing and not self._waiting and not any(s.reply for s in self.seats):
                    self._after_work(self._after)  # no follow-up is awaited any more: the states are saved as they are
                    self._after = []
                    return
                self._gather_a_new_wave()
                admitted = self._take_admissions()
                refits, self._refits = self._refits, []
                ready = [work for work in self._after if not work.waiting_for]
                self._after = [work for work in self._after if work.waiting_for]
            self._after_work(ready)
            output = StepOutput()
            for reply, prompt, dropped in refits:
                seat = self.seats[reply.seq_id] if reply.seq_id is not None else None
                if seat is not None and seat.reply is reply and seat.run is not None:
                    try:
                        seat.run.make_room(prompt, dropped)
                    except Exception as exc:  # a bug: this reply ends with it
                        log.exception("making room for the reply of %r", reply.conversation_id)
                        seat.run.fail(exc)
            self._release_resting()
            for reply, seat in admitted:
                self._admit(reply, seat)
            try:
                self._step(output)
            except Exception as exc:  # a bug: every streaming reply ends with it rather than hang
                log.exception("a decode step failed")
                for seat in self.seats:
                    if seat.run is not None:
                        seat.run.fail(exc)
                self._collect(output)
            self._hand_out(output)

    def _has_work(self) -> bool:
        """Called with the lock held: whether a pass of the loop has anything to do."""
        if self._closing or self._waiting or self._refits or any(not work.waiting_for for work in self._after):
            return True
        return any(s.run is not None and s.run.phase is not Phase.NEEDS_ROOM for s in self.seats) or any(
            s.run is not None and s.run.request.cancel.is_set() for s in self.seats
        )

    def _gather_a_new_wave(self) -> None:
        """While nothing streams, wait for the replies known to be on their way (at most gather_s after the first
        waiting reply came), or until the waiting replies fill every seat. Called with the lock held; submit and
        the end of `expect` notify."""
        if any(s.reply for s in self.seats) or not self._waiting:
            return
        deadline = self._waiting[0].submitted + self.gather_s
        while not self._closing and self._arriving and len(self._waiting) < len(self.seats):
            now = time.perf_counter()
            if now >= deadline:
                return
            self._changed.wait(deadline - now)

    def _take_admissions(self) -> list[tuple[ScheduledReply, Seat]]:
        """The waiting replies that get a seat now, in arrival order; one held back by its owner's share does not
        hold up the other owner's. One waiting for its prefix to be read keeps a free seat from those after it.
        Called with the lock held."""
        admitted: list[tuple[ScheduledReply, Seat]] = []
        awaiting = 0
        for reply in list(self._waiting):
            if sum(s.reply is None and s.held_for is None for s in self.seats) <= awaiting:
                break
            if self._prefix_being_read(reply, [other for other, _ in admitted]):
                awaiting += 1
                continue
            seat = self._seat_for(reply)
            if seat is None:
                continue
            self._waiting.remove(reply)
            seat.reply = reply
            admitted.append((reply, seat))
        return admitted

    def _prefix_being_read(self, reply: ScheduledReply, admitted: list[ScheduledReply]) -> bool:
        """Whether this reply's prompt begins with most of one being read for another reply of its owner (admitted
        now or still prefilling): it then waits for that prefill and shares those cells (_share_prefix) instead of
        reading the same tokens beside it, as `n` choices of one prompt, or clients sending one long document at
        once, would. Most: half of the other prompt at least, so that a short reply does not wait out a long
        document's prefill for their common system prompt. Called with the lock held."""
        prompt = reply.request.prompt
        if reply.request.prompt_logprobs or not self.llama.can_rewind:
            return False
        reading = admitted + [s.reply for s in self.seats if s.reply is not None and s.run is not None and s.run.phase is Phase.PREFILLING]
        for other in reading:
            if other.owner != reply.owner or other.request.prompt_logprobs:
                continue
            shared = common_prefix(other.request.prompt, prompt)
            if shared >= MIN_AWAITED_PREFIX and 2 * shared >= len(other.request.prompt):
                return True
        return False

    def _seat_for(self, reply: ScheduledReply, dry_run: bool = False) -> Seat | None:
        """The resting seat this reply should take (None: it waits). Called with the lock held."""
        piece = lambda token: self.llama.piece(token, special=True)
        seeker = Seeker(reply.owner, reply.conversation_id, reply.request.prompt)
        index = choose_seat([s.view() for s in self.seats], seeker, self._owners_seen, piece, dry_run)
        return self.seats[index] if index is not None else None

    def _admit(self, reply: ScheduledReply, seat: Seat) -> None:
        seq = seat.seq
        reply.seq_id, reply.admitted = seq.seq_id, time.perf_counter()
        seat.saved_as, seat.released = "", 0
        if seat.owner != reply.owner:
            seq.clear()  # another owner's cache is never reused, not even a shared system prompt
        seat.owner, seat.conversation_id = reply.owner, reply.conversation_id
        request = reply.request
        scoring = request.prompt_logprobs  # the prompt is read again whole (for its rows of logits): nothing to share or restore
        if not scoring:
            self._share_prefix(seat, request.prompt)
        run = ReplyRun(seq, request, reply.stats, reply.make_stepper, started=reply.submitted)
        seat.run = run
        try:
            prompt = self.states.restore(seq, request.prompt, reply.stats, reply.owner) if self.states is not None and not scoring else None
            if prompt is None:
                prompt = align(seq.tokens, request.prompt, lambda token: self.llama.piece(token, special=True))
            run.prepare(prompt)
        except Exception as exc:  # a prompt longer than the context (RpcError), or a bug: this reply ends with it
            if not isinstance(exc, RpcError):
                log.exception("admitting the reply of %r", reply.conversation_id)
            run.fail(exc)

    def _share_prefix(self, seat: Seat, prompt: Sequence[int]) -> None:
        """If another sequence of the same owner holds more of this prompt (a system prompt, the history
        of a conversation branched off), this one shares those cells instead of computing them again."""
        seq = seat.seq
        if not self.llama.can_rewind:
            return
        piece = lambda token: self.llama.piece(token, special=True)
        own = common_prefix(seq.tokens, align(seq.tokens, prompt, piece)) if seq.tokens else 0
        donor, shared = None, own
        for other in self.seats:
            if other is seat or other.owner != seat.owner or not other.seq.tokens:
                continue
            n = common_prefix(other.seq.tokens, align(other.seq.tokens, prompt, piece))
            if n > shared:
                donor, shared = other, n
        if donor is None or shared < own + MIN_SHARED_TOKENS:
            return
        seq.share(donor.seq, shared)

    def _release_resting(self) -> None:
        """While a reply streams or is about to, the seats resting with a cache the KV store holds give up their cells.

        The context's sequences share one KV cache, and llama.cpp attends over every cell up to the
        highest one in use, masking the other sequences' cells (llama_kv_cache::get_n_kv). So each
        conversation kept warm made every token decoded elsewhere slower, more the longer it was: with
        3 x 3,000 tokens resting, 1.11x the step time with flash attention, 1.86x without
        (bench/warm_seats.py). Switching back restores the state from the store instead (a copy from
        RAM, a few ms per 1,000 tokens, or about 50 ms from disk: bench/switch_back.py, kv_restore.py),
        into the seat it left (seat_choice.py), where its draft model's cache still is.

        Before the admitted replies' prompts go in: a state restored, or a prompt read, while the others
        still hold their cells lands above theirs, and every step would go on spanning the cells freed
        below it (llama.cpp starts its search for free cells from the bottom again once enough are free)."""
        if self.states is None or not any(s.reply is not None for s in self.seats):
            return
        for seat in self.seats:
            if seat.reply is not None or seat.held_for is not None or not seat.saved_as or not seat.seq.tokens:
                continue
            if self.states.holds(seat.seq, seat.saved_as):  # else not yet: a state too big for RAM is still being written
                with self._changed:  # context_used reads the seat from other threads
                    seat.released = len(seat.seq.tokens)
                    seat.seq.clear()
                    seat.saved_as = ""

    def _step(self, output: StepOutput) -> None:
        active = [s.run for s in self.seats if s.run is not None and not s.run.done]
        if active:
            for run in decode_step(active):
                if run.phase is Phase.NEEDS_ROOM:
                    output.room_needed.append((self._reply_of(run), len(run.sink.completion)))
        self._collect(output)

    def _reply_of(self, run: ReplyRun) -> ScheduledReply:
        seat = self.seats[run.seq.seq_id]
        assert seat.reply is not None and seat.run is run
        return seat.reply

    def _collect(self, output: StepOutput) -> None:
        """Each reply's new text, and the replies that are over (their seats freed, or held for their after-work)."""
        for seat in self.seats:
            run, reply = seat.run, seat.reply
            if run is None or reply is None:
                continue
            text, reasoning, logprobs = run.take_text(), run.take_reasoning(), run.take_logprobs()
            if text or reasoning or logprobs:
                output.texts.append((reply, text, reasoning, logprobs))
            if not run.done:
                continue
            reply.error = run.error
            reply.outcome = run.outcome() if run.error is None else None
            seat.run = None
            seat.last_used = time.monotonic()
            output.ended.append((seat, reply))

    def _hand_out(self, output: StepOutput) -> None:
        """The step's results to the replies' channels and callers: text first, then who ended, then who needs room.
        The after-work of the replies that ended begins only after all of them are out."""
        for reply, text, reasoning, logprobs in output.texts:
            try:
                hand_on(reply.request, text, reasoning, logprobs)
            except Exception:  # an output channel that fails loses its text, never the loop
                log.exception("handing out the text of %r", reply.conversation_id)
        if output.ended:
            work = _AfterWork([])
            with self._changed:
                for seat, reply in output.ended:
                    seat.reply = None
                    if reply.drops_cells:
                        seat.seq.clear()
                    if not (reply.follows_up or reply.saves_state):
                        continue
                    seat.held_for = reply
                    self._finishing += 1
                    work.seats.append((seat, reply))
                    if reply.follows_up and reply.error is None and reply.outcome is not None and reply.outcome.finish_reason != "cancelled":
                        work.waiting_for.add(id(reply))
                if work.seats:
                    self._after.append(work)
                self._changed.notify_all()
            for _seat, reply in output.ended:
                reply._end()
        for reply, committed in output.room_needed:
            reply.news.put(RoomNeeded(committed))

    def _after_work(self, ready: list[_AfterWork]) -> None:
        """For replies over whose callers have sent their follow-ups: the next turns' starts, in one llama_decode
        call for all of them, then each one's state saved; their seats are free again after."""
        done = [pair for work in ready for pair in work.seats]
        if not done:
            return
        next_turns = {key: tokens for work in ready for key, tokens in work.next_turns.items()}
        rewritten = {key: n for work in ready for key, n in work.rewritten.items()}
        headers = []
        for seat, reply in done:
            tokens = self._next_turn_header(seat.seq, next_turns.get(id(reply), ()), rewritten.get(id(reply), 0))
            if tokens:
                headers.append(Slice(seat.seq, tokens))
        try:
            self.llama.decode_slices(headers)
        except Exception:  # only time is lost: the next turn evaluates them itself
            log.exception("could not evaluate the next turns' headers")
        for seat, reply in done:
            try:
                if reply.saves_state and self.states is not None and reply.outcome is not None:
                    seat.saved_as = self.states.save(seat.seq, reply.cache_key or reply.conversation_id, reply.owner) or ""
            except Exception:
                log.exception("saving the state of %r", reply.conversation_id)
            finally:
                with self._changed:
                    seat.held_for = None
                    self._finishing -= 1
                    self._changed.notify_all()

    def _next_turn_header(self, seq: Seq, next_turn: Sequence[int], rewritten: int = 0) -> list[int]:
        """The tokens of `next_turn` (how every next turn starts) that `seq` lacks, `seq` rewound to where they go;
        [] when that is not the cache of this reply or too much to evaluate unasked (beyond the `rewritten` tokens)."""
        if not next_turn:
            return []
        try:
            header = align(seq.tokens, next_turn, lambda token: seq.piece(token, special=True))
            common = seq.common_prefix(header)
            allowed = MAX_NEXT_TURN_HEADER + rewritten
            if len(header) - common > allowed or len(header) >= seq.n_ctx - 1 or common < len(seq.tokens) - allowed:
                return []
            seq.truncate(common)
            return header[common:]
        except Exception:
            log.exception("the next turn's header")
            return []
