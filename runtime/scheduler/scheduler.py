"""Continuous batching: the replies of several conversations decoded together, one llama_decode call per step.

The model's context holds `n_seq` sequences (llama_model.py); each is a slot that
one conversation's KV cache lives in, streaming or resting between its turns.
One engine thread runs the loop: it admits waiting replies into slots in the
order they came, then builds each step's batch from every admitted reply (the
next token of each one that streams, with its speculative draft, and chunks of
new prompts in what the batch has left: chunked prefill, so a new prompt's time
to first token stays bounded while the others keep streaming; prompts sent
together are read whole, generation.decode_step), decodes it with one
llama_decode call and hands each reply its logits rows (generation.ReplyRun).
Replies that end in the same step are all answered before their after-work (the
next turn's headers, in one llama_decode call; the states saved) begins.

Which slot a reply gets: the one its conversation rests in, else the resting slot
whose cache shares the most with its prompt (switching back to a recent
conversation costs no restore), else an empty one, else the one resting longest; the KV store on disk (runtime/kvstore) covers
conversations no slot holds any more. A prompt that begins like another sequence's
cache (the same system prompt) shares those cells (Sequence.share) instead of
computing them again. Caches are kept apart by owner (the
protocol client, the API): a reply never reuses or restores a cache another
owner made, and a slot changing owner is emptied first. When both owners have
asked for replies, neither may hold every slot, so neither ever waits for the
other to finish.

Prompts sent together are read in one batch even though each is rendered on its
own thread first: a wave of prompts that would start while nothing streams waits
for the replies still `arriving` (their prompts being rendered) and until no reply
was submitted for QUIET_S, at most GATHER_S in all. Otherwise the first one was
read alone and the others, submitted 1 to 12 ms later, waited for it: four API
clients at once read one prompt of 14 tokens in 0.37 s, then three more in the
next batch. A reply on its own starts at most QUIET_S later.

Everything that touches the llama.cpp context happens on the engine thread.
Other threads `submit` replies and wait for them, and `cancel` them.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from runtime.llama.generation import Decoder, GenerationOutcome, GenerationRequest, ReplyRun, decode_step
from runtime.llama.llama_model import LlamaModel, Slice
from runtime.llama.llama_model import KvSequence as Seq
from runtime.llama.token_alignment import align, common_prefix
from runtime.job_slot import PROTOCOL
from runtime.protocol import GenerationStats, RpcError

log = logging.getLogger("lokal.scheduler")

MIN_REUSE_TOKENS = 32  # below this, a fresh slot is better than another conversation's cache
MIN_SHARED_TOKENS = 8  # a prefix another sequence holds is shared when it saves at least this many tokens
GATHER_S = 0.05  # the longest a new wave of prompts waits for more replies
QUIET_S = 0.01  # ...and it starts once no reply was submitted for this long (and none is arriving)


@dataclass(eq=False)
class ScheduledReply:
    """A reply handed to the scheduler, and what becomes of it."""

    request: GenerationRequest
    decoder: Decoder
    owner: str = PROTOCOL  # whose caches it may reuse (PROTOCOL or API)
    conversation_id: str = ""
    stats: GenerationStats = field(default_factory=GenerationStats)
    # On the engine thread, once the reply is over and its waiter has the outcome: the tokens every next turn
    # of the conversation starts with, to evaluate now (the sequence rewound to where they go; engine.py)...
    next_turn: Callable[[Seq, GenerationOutcome], Sequence[int]] | None = None
    # ...then work that may use the sequence (the state saved for later).
    after: Callable[[Seq, GenerationOutcome], None] | None = None
    # Restore a saved state into the sequence if it beats what the sequence holds (runtime/kvstore):
    # the prompt spelled with the restored ids, or None.
    restore: Callable[[Seq, Sequence[int], GenerationStats, str], list[int] | None] | None = None
    submitted: float = field(default_factory=time.perf_counter)
    done: threading.Event = field(default_factory=threading.Event)
    outcome: GenerationOutcome | None = None
    error: BaseException | None = None
    seq_id: int | None = None  # the slot it got
    admitted: float | None = None  # when it got it (perf_counter)


@dataclass(eq=False)
class Slot:
    seq: Seq
    owner: str | None = None
    conversation_id: str = ""
    last_used: float = 0.0
    reply: ScheduledReply | None = None
    run: ReplyRun | None = None


class Scheduler:
    def __init__(self, llama: LlamaModel, gather_s: float = GATHER_S, quiet_s: float = QUIET_S):
        self.llama = llama
        self.slots = [Slot(seq) for seq in llama.sequences]
        self.gather_s, self.quiet_s = gather_s, quiet_s
        self._waiting: collections.deque[ScheduledReply] = collections.deque()
        self._arriving = 0  # replies whose prompts are being rendered, to be submitted soon
        self._last_submit = 0.0  # perf_counter
        self._owners_seen: set[str] = set()
        self._finishing = 0  # replies over whose after-work still runs
        self._changed = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="engine", daemon=True)
        self._thread.start()

    # ---- other threads -------------------------------------------------------
    def submit(self, reply: ScheduledReply) -> bool:
        """Queue a reply; True if it has to wait for a slot (every one it may take is streaming)."""
        with self._changed:
            if self._closing:
                raise RuntimeError("the scheduler is closed")
            self._owners_seen.add(reply.owner)
            self._waiting.append(reply)
            self._last_submit = time.perf_counter()
            waits = self._slot_for(reply, dry_run=True) is None or len(self._waiting) > 1
            self._changed.notify_all()
        return waits

    @contextlib.contextmanager
    def arriving(self):
        """Around the work before `submit` (rendering and fitting the prompt): a wave of prompts about
        to start while nothing streams waits for this reply, so that it joins their batch."""
        with self._changed:
            self._arriving += 1
        try:
            yield
        finally:
            with self._changed:
                self._arriving -= 1
                self._changed.notify_all()

    def cancel(self, reply: ScheduledReply) -> None:
        reply.request.cancel.set()
        with self._changed:
            if reply in self._waiting:
                self._waiting.remove(reply)
                reply.stats.total_ms = (time.perf_counter() - reply.submitted) * 1000
                reply.outcome = GenerationOutcome("", "cancelled", reply.stats, [])
                reply.done.set()
            self._changed.notify_all()

    def streaming(self, owner: str | None = None) -> list[ScheduledReply]:
        """The replies admitted and not yet over (of one owner, or all)."""
        with self._changed:
            return [s.reply for s in self.slots if s.reply is not None and (owner is None or s.reply.owner == owner)]

    def context_used(self, owner: str, conversation_id: str | None = None) -> int:
        """Tokens in the sequence of `owner`'s newest reply (of `conversation_id`'s, when given): the one
        streaming, else the last one; 0 when no slot holds that conversation now."""
        with self._changed:
            mine = [s for s in self.slots if s.owner == owner and (conversation_id is None or s.conversation_id == conversation_id)]
            streaming = [s for s in mine if s.reply is not None]
            if streaming:
                return len(max(streaming, key=lambda s: s.reply.submitted).seq.tokens)
            rested = [s for s in mine if s.last_used]
            return len(max(rested, key=lambda s: s.last_used).seq.tokens) if rested else 0

    def _idle(self) -> bool:
        return not self._waiting and not self._finishing and all(s.reply is None for s in self.slots)

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
                while not self._waiting and not any(s.reply for s in self.slots) and not self._closing:
                    self._changed.wait()
                if self._closing and not self._waiting and not any(s.reply for s in self.slots):
                    return
                self._gather_a_new_wave()
                admitted = []
                for reply in list(self._waiting):  # in arrival order; one held back by its owner's share does not hold up the other owner's
                    if all(s.reply is not None for s in self.slots):
                        break
                    slot = self._slot_for(reply)
                    if slot is None:
                        continue
                    self._waiting.remove(reply)
                    slot.reply = reply
                    admitted.append((reply, slot))
            for reply, slot in admitted:
                self._admit(reply, slot)
            try:
                self._step()
            except Exception as exc:  # a bug: every streaming reply ends with it rather than hang
                log.exception("a decode step failed")
                failed = [slot for slot in self.slots if slot.reply is not None]
                for slot in failed:
                    slot.reply.error = exc
                self._finish(failed)

    def _gather_a_new_wave(self) -> None:
        """While nothing streams, wait for the replies still arriving and for a quiet moment without
        submits (at most gather_s after the first waiting reply came), or until the waiting replies fill
        every slot. Called with the lock held; submit and `arriving` notify."""
        if any(s.reply for s in self.slots) or not self._waiting:
            return
        deadline = self._waiting[0].submitted + self.gather_s
        while not self._closing and len(self._waiting) < len(self.slots):
            now = time.perf_counter()
            until = deadline if self._arriving else min(deadline, self._last_submit + self.quiet_s)
            if now >= until:
                return
            self._changed.wait(until - now)

    def _slot_for(self, reply: ScheduledReply, dry_run: bool = False) -> Slot | None:
        """The resting slot this reply should take (None: it waits). Called with the lock held."""
        resting = [s for s in self.slots if s.reply is None]
        if not resting:
            return None
        others = self._owners_seen - {reply.owner}
        mine = sum(1 for s in self.slots if s.reply is not None and s.reply.owner == reply.owner)
        if others and len(self.slots) >= 2 and mine >= len(self.slots) - 1:
            return None  # the other owner keeps a slot of its own
        if dry_run:
            return resting[0]
        prompt = reply.request.prompt
        piece = lambda token: self.llama.piece(token, special=True)
        best, best_shared = None, 0
        for slot in resting:
            if slot.owner == reply.owner and slot.seq.tokens:
                shared = common_prefix(slot.seq.tokens, align(slot.seq.tokens, prompt, piece))
                if slot.conversation_id == reply.conversation_id and shared:
                    return slot  # its own conversation's cache (a next turn, a regenerate, an edit)
                if shared > best_shared:
                    best, best_shared = slot, shared
        empty = [s for s in resting if not s.seq.tokens]
        if best is not None and (best_shared >= MIN_REUSE_TOKENS or not empty):
            return best
        if empty:
            return empty[0]
        return min(resting, key=lambda s: s.last_used)

    def _admit(self, reply: ScheduledReply, slot: Slot) -> None:
        seq = slot.seq
        reply.seq_id, reply.admitted = seq.seq_id, time.perf_counter()
        if slot.owner != reply.owner:
            seq.clear()  # another owner's cache is never reused, not even a shared system prompt
        slot.owner, slot.conversation_id = reply.owner, reply.conversation_id
        request = reply.request
        self._share_prefix(slot, request.prompt)
        run = ReplyRun(seq, request, reply.stats, reply.decoder, started=reply.submitted)
        slot.run = run
        try:
            prompt = reply.restore(seq, request.prompt, reply.stats, reply.owner) if reply.restore is not None else None
            if prompt is None:
                prompt = align(seq.tokens, request.prompt, lambda token: self.llama.piece(token, special=True))
            run.prepare(prompt)
        except Exception as exc:  # a prompt longer than the context (RpcError), or a bug: this reply ends with it
            if not isinstance(exc, RpcError):
                log.exception("admitting the reply of %r", reply.conversation_id)
            reply.error = exc
            run.phase = "done"
        if run.done:
            self._finish([slot])

    def _share_prefix(self, slot: Slot, prompt: Sequence[int]) -> None:
        """If another sequence of the same owner holds more of this prompt (a system prompt, the history
        of a conversation branched off), this one shares those cells instead of computing them again."""
        seq = slot.seq
        if not self.llama.can_rewind:
            return
        piece = lambda token: self.llama.piece(token, special=True)
        own = common_prefix(seq.tokens, align(seq.tokens, prompt, piece)) if seq.tokens else 0
        donor, shared = None, own
        for other in self.slots:
            if other is slot or other.owner != slot.owner or not other.seq.tokens:
                continue
            n = common_prefix(other.seq.tokens, align(other.seq.tokens, prompt, piece))
            if n > shared:
                donor, shared = other, n
        if donor is None or shared < own + MIN_SHARED_TOKENS:
            return
        seq.share(donor.seq, shared)

    def _step(self) -> None:
        active = [s for s in self.slots if s.run is not None and not s.run.done]
        if active:
            decode_step([s.run for s in active])
        self._finish([s for s in self.slots if s.run is not None and s.run.done])

    def _finish(self, slots: list[Slot]) -> None:
        """End these replies: each waiter has its outcome first, then each one's after-work runs (its state
        saved), so replies that end in the same step are all out at once, not one after-work apart."""
        ended = []
        for slot in slots:
            reply, run = slot.reply, slot.run
            slot.run = None
            if run is not None and run.error is not None and reply.error is None:
                reply.error = run.error
            if run is not None and reply.error is None:
                reply.outcome = run.outcome()
            slot.last_used = time.monotonic()
            with self._changed:
                slot.reply = None
                self._finishing += 1
            ended.append((slot, reply))
        for _slot, reply in ended:
            reply.done.set()
        self._evaluate_next_turns(ended)
        for slot, reply in ended:
            try:
                if reply.after is not None and reply.outcome is not None:
                    reply.after(slot.seq, reply.outcome)
            except Exception:
                log.exception("after the reply of %r", reply.conversation_id)
            finally:
                with self._changed:
                    self._finishing -= 1
                    self._changed.notify_all()

    def _evaluate_next_turns(self, ended: list[tuple[Slot, ScheduledReply]]) -> None:
        """The next turn's header of every reply that just ended, in one llama_decode call for them all."""
        headers = []
        for slot, reply in ended:
            if reply.next_turn is None or reply.outcome is None:
                continue
            try:
                tokens = reply.next_turn(slot.seq, reply.outcome)
            except Exception:
                log.exception("the next turn's header of %r", reply.conversation_id)
                continue
            if tokens:
                headers.append(Slice(slot.seq, list(tokens)))
        try:
            self.llama.decode_slices(headers)
        except Exception:  # only time is lost: the next turn evaluates them itself
            log.exception("could not evaluate the next turns' headers")
