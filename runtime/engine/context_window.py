"""What to do when a conversation no longer fits the context: leave out its oldest turns.

The policy, in order:
1. Leading system messages and the newest message are always kept.
2. Whole turns are left out from the oldest on: the cut is always placed before a
   user message, so the kept history still starts with a user turn (many chat
   templates insist on user/assistant alternation).
3. Room is kept for the reply: min(max_tokens, n_ctx / 4) tokens.
4. When turns must be left out, enough go that the prompt plus that room fills at
   most 3/4 of the context, and the runtime remembers the cut per conversation:
   the next turns keep the same cut, so their prompts share a prefix with the KV
   cache and are not re-evaluated from the top each time.
5. If the newest message does not fit even with the system prompt, the system
   prompt goes too; if the newest message alone cannot fit, CONTEXT_OVERFLOW.
6. When the reply itself fills the context, the same cut moves further (the
   reply so far counts as committed tokens) and the cache is rebuilt as the
   kept turns plus the whole reply so far; the reply goes on. Only if the reply
   alone leaves no room does it end with finish_reason "length".
The number of messages left out is reported (stats.context_dropped_messages);
nothing is ever cut inside a message.
"""

from __future__ import annotations

import threading
from typing import Callable, Sequence

from runtime.engine.chat_template import RenderCancelled, cancelled_by
from runtime.protocol import ChatMessage, ContextOverflow, ErrorCode, RpcError

REFILL_FRACTION = 0.75
REPLY_SHARE = 4  # at most 1/4 of the context is held back for the reply
# Bounds on one conversation, far above any real one, so a crafted request is refused at once instead of
# holding the engine: its number of messages, and the characters of their text.
MAX_MESSAGES = 100_000
MAX_CONVERSATION_CHARS = 32 << 20
# Tokens of prompt are at most this many characters of text each (real tokenizers average 3 to 5), and every
# message is at least one token: a conversation with more text than n_ctx times this, or more messages than
# n_ctx, is not rendered whole to find out whether it fits (the fit starts from its newest turns).
MAX_CHARS_PER_TOKEN = 64


class FitCancelled(Exception):
    """The request was cancelled while its conversation was being fitted to the context."""


def reply_room(n_ctx: int, max_tokens: int) -> int:
    return max(1, min(max_tokens, n_ctx // REPLY_SHARE))


def check_conversation_size(messages: Sequence[ChatMessage]) -> None:
    if len(messages) > MAX_MESSAGES:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.messages: {len(messages)} messages; at most {MAX_MESSAGES} are accepted", {"messages": len(messages), "limit": MAX_MESSAGES})
    chars = 0
    for m in messages:
        chars += len(m.content)
        if chars > MAX_CONVERSATION_CHARS:
            raise RpcError(ErrorCode.INVALID_PARAMS, f"params.messages: more than {MAX_CONVERSATION_CHARS} characters of text; a conversation is accepted up to that", {"limit_chars": MAX_CONVERSATION_CHARS})


def fit_to_context(
    messages: Sequence[ChatMessage],
    render: Callable[[list[ChatMessage]], list[int]],
    n_ctx: int,
    max_tokens: int,
    cuts: dict[str, int],
    conversation_id: str,
    committed: int = 0,
    cancel: threading.Event | None = None,
    n_ctx_train: int = 0,
) -> tuple[list[int], int]:
    """(prompt tokens, messages left out). `cuts` remembers each conversation's cut across turns.

    `committed`: tokens of a reply already generated, which must fit after the prompt too.
    The cut is found from the newest message backwards (CutsFromEnd): the kept part is rendered
    with 1, 2, 4, ... more turns until it no longer fits, then bisected, so the renders are about
    the size of what is kept and never reach the messages left out far behind it: the cost does not
    grow with the messages dropped. A conversation whose part from the remembered cut may fit (no
    more messages than n_ctx tokens) is rendered whole first: one render for the usual turn.
    `cancel` is looked at before every render and inside it, on every loop iteration of the
    template (FitCancelled). `n_ctx_train`: the model's trained context, told with an overflow (beyond
    it, a larger context would not help). Too many messages or too much text: INVALID_PARAMS at once.
    """
    messages = list(messages)
    check_conversation_size(messages)
    room = reply_room(n_ctx, max_tokens) + committed
    lead = 0
    while lead < len(messages) - 1 and messages[lead].role == "system":
        lead += 1
    system, history = messages[:lead], messages[lead:]
    remembered = cuts.get(conversation_id, 0)
    # Where a cut may go: before a user message, or just before the newest message.
    if remembered and not (0 < remembered < len(history) and (history[remembered].role == "user" or remembered == len(history) - 1)):
        remembered = 0  # the conversation changed under the cut (edited, shortened): start over
    cuts_back = CutsFromEnd(history, remembered)
    rendered: dict[int, list[int]] = {}

    def tokens_at(r: int) -> list[int]:  # r: the r-th cut from the newest (cuts_back)
        if r not in rendered:
            rendered[r] = _render(render, system + history[cuts_back.cut(r):], cancel)
        return rendered[r]

    def fits(r: int) -> bool:  # the whole of it, with room for the reply
        return len(tokens_at(r)) + room <= n_ctx

    def refills(r: int) -> bool:  # with headroom for the next turns too (true up to some r: fewer messages, fewer tokens)
        return len(tokens_at(r)) + room <= REFILL_FRACTION * n_ctx

    def keep(r: int) -> tuple[list[int], int]:
        _remember(cuts, conversation_id, cuts_back.cut(r))
        return tokens_at(r), cuts_back.cut(r)

    def whole_fits(start: int) -> bool:
        """Whether the part from the remembered cut fits, galloping on from cut `start` towards it: each
        render at most about twice what fits, and it stops at the first that does not fit."""
        r, step = start, 1
        while True:
            if not fits(r):
                return False
            if cuts_back.is_remembered(r):
                return True
            r = cuts_back.clamp(r + step)
            step *= 2

    # The usual turn: the part from the remembered cut may fit (each message is at least a token), rendered once.
    whole_tried = len(history) - remembered <= n_ctx and sum(len(m.content) for m in system + history[remembered:]) <= n_ctx * MAX_CHARS_PER_TOKEN
    if whole_tried or cuts_back.is_remembered(0):
        if fits(cuts_back.remembered_index()):
            return keep(cuts_back.remembered_index())
        whole_tried = True

    if not cuts_back.is_remembered(0):
        if refills(0):
            # Gallop from the newest towards the remembered cut while the kept part still refills, then bisect.
            good, step, bad = 0, 1, None
            while bad is None:
                probe = cuts_back.clamp(good + step)
                if cuts_back.is_remembered(probe):
                    bad = probe  # the remembered cut is not a candidate of the 3/4 rule: only of the whole fitting
                elif refills(probe):
                    good, step = probe, step * 2
                else:
                    bad = probe
            while bad - good > 1:
                middle = (good + bad) // 2
                if refills(middle):
                    good = middle
                else:
                    bad = middle
            if not whole_tried and whole_fits(good):  # everything fits after all (the size guess overrated it)
                return keep(cuts_back.remembered_index())
            return keep(good)
        if not whole_tried and whole_fits(0):
            return keep(cuts_back.remembered_index())
        if len(tokens_at(0)) + committed < n_ctx:  # fits, with less headroom
            return keep(0)

    tokens = _render(render, history[-1:], cancel)
    if len(tokens) + committed < n_ctx:
        _remember(cuts, conversation_id, 0)
        return tokens, len(messages) - 1
    raise ContextOverflow(len(tokens), n_ctx, n_ctx_train).error(f"the last message alone is {len(tokens)} tokens long and does not fit the context of {n_ctx} tokens")


def _render(render: Callable[[list[ChatMessage]], list[int]], messages: list[ChatMessage], cancel: threading.Event | None) -> list[int]:
    """One render, which stops (FitCancelled) when the request is cancelled, before it or inside the template."""
    if cancel is not None and cancel.is_set():
        raise FitCancelled()
    try:
        with cancelled_by(cancel):
            return render(messages)
    except RenderCancelled:
        raise FitCancelled() from None


class CutsFromEnd:
    """The places a conversation may be cut, counted from the newest message backwards and found only as far
    back as they are asked for: cut(0) is just before the newest message, cut(1) before the user message
    before it, and so on; the last one is the remembered cut (0: nothing left out). The messages further
    back than the fit looks are never visited."""

    def __init__(self, history: Sequence[ChatMessage], remembered: int):
        self._history = history
        self._remembered = remembered
        last = len(history) - 1
        self._found = [last] if last > remembered else []  # cut indices into history, newest first
        self._scanned = last  # history[_scanned:] has been looked at
        self._complete = False
        if not self._found:
            self._finish()

    def _finish(self) -> None:
        self._found.append(self._remembered)
        self._complete = True

    def _scan_to(self, r: int) -> None:
        while len(self._found) <= r and not self._complete:
            self._scanned -= 1
            if self._scanned <= self._remembered:
                self._finish()
            elif self._history[self._scanned].role == "user":
                self._found.append(self._scanned)

    def clamp(self, r: int) -> int:
        """r, or the remembered cut's place if there are fewer cuts than that."""
        self._scan_to(r)
        return min(r, len(self._found) - 1)

    def cut(self, r: int) -> int:
        self._scan_to(r)
        return self._found[r]

    def is_remembered(self, r: int) -> bool:
        self._scan_to(r)
        return self._complete and r >= len(self._found) - 1

    def remembered_index(self) -> int:
        """The remembered cut's place in this order (found by scanning the whole part after it)."""
        self._scan_to(len(self._history))
        return len(self._found) - 1


def _remember(cuts: dict[str, int], conversation_id: str, cut: int) -> None:
    if cut:
        cuts[conversation_id] = cut
    else:
        cuts.pop(conversation_id, None)
