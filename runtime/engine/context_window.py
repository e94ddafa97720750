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
from runtime.engine.llama_model import DecodeAborted, LlamaModel
from runtime.protocol import ChatMessage, ErrorCode, GenerationStats, RpcError

REFILL_FRACTION = 0.75
REPLY_SHARE = 4  # at most 1/4 of the context is held back for the reply
# Bounds on one conversation, far above any real one, so a crafted request is refused at once instead of
# holding the engine: its number of messages, and the characters of their text.
MAX_MESSAGES = 100_000
MAX_CONVERSATION_CHARS = 32 << 20
# Tokens of prompt are at most this many characters of text each (real tokenizers average 3 to 5): a
# conversation longer than n_ctx times this cannot fit, so it is not rendered whole to find that out.
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
) -> tuple[list[int], int]:
    """(prompt tokens, messages left out). `cuts` remembers each conversation's cut across turns.

    `committed`: tokens of a reply already generated, which must fit after the prompt too.
    The cut is found with O(log n) renders, each of about the part that is kept (galloping from the
    newest message, then bisecting), never one render per possible cut. `cancel` is looked at before
    every render and inside it, on every loop iteration of the template (FitCancelled). Too many messages or too much text: INVALID_PARAMS at once.
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
    # candidates[0] is the remembered cut; the others, the cuts that leave out more, oldest first.
    candidates = [remembered] + [d for d in range(remembered + 1, len(history)) if history[d].role == "user" or d == len(history) - 1]
    rendered: dict[int, list[int]] = {}

    def tokens_at(i: int) -> list[int]:
        if i not in rendered:
            rendered[i] = _render(render, system + history[candidates[i]:], cancel)
        return rendered[i]

    def fits(i: int) -> bool:  # the whole of it, with room for the reply
        return len(tokens_at(i)) + room <= n_ctx

    def refills(i: int) -> bool:  # with headroom for the next turns too (true from some cut on: fewer messages, fewer tokens)
        return len(tokens_at(i)) + room <= REFILL_FRACTION * n_ctx

    last = len(candidates) - 1
    text = sum(len(m.content) for m in system) + sum(len(m.content) for m in history[remembered:])
    if (text <= n_ctx * MAX_CHARS_PER_TOKEN or last == 0) and fits(0):
        _remember(cuts, conversation_id, remembered)
        return tokens_at(0), remembered

    if last > 0:
        if not refills(last):
            if len(tokens_at(last)) + committed < n_ctx:  # fits, with less headroom
                _remember(cuts, conversation_id, candidates[last])
                return tokens_at(last), candidates[last]
        else:
            # Gallop from the newest towards the oldest while the kept part still refills, then bisect.
            good, step, bad = last, 1, 0
            while good - step > 0:
                if refills(good - step):
                    good, step = good - step, step * 2
                else:
                    bad = good - step
                    break
            else:
                if 0 not in rendered and fits(0):  # everything fits after all (text the size guess overrated)
                    _remember(cuts, conversation_id, remembered)
                    return tokens_at(0), remembered
            while good - bad > 1:
                middle = (good + bad) // 2
                if refills(middle):
                    good = middle
                else:
                    bad = middle
            _remember(cuts, conversation_id, candidates[good])
            return tokens_at(good), candidates[good]

    tokens = _render(render, history[-1:], cancel)
    if len(tokens) + committed < n_ctx:
        _remember(cuts, conversation_id, 0)
        return tokens, len(messages) - 1
    raise RpcError(
        ErrorCode.CONTEXT_OVERFLOW,
        f"the last message alone is {len(tokens)} tokens long and does not fit the context of {n_ctx} tokens",
        {"prompt_tokens": len(tokens), "n_ctx": n_ctx},
    )


def _render(render: Callable[[list[ChatMessage]], list[int]], messages: list[ChatMessage], cancel: threading.Event | None) -> list[int]:
    """One render, which stops (FitCancelled) when the request is cancelled, before it or inside the template."""
    if cancel is not None and cancel.is_set():
        raise FitCancelled()
    try:
        with cancelled_by(cancel):
            return render(messages)
    except RenderCancelled:
        raise FitCancelled() from None


def _remember(cuts: dict[str, int], conversation_id: str, cut: int) -> None:
    if cut:
        cuts[conversation_id] = cut
    else:
        cuts.pop(conversation_id, None)


def make_room_for_reply(
    model: LlamaModel,
    completion: Sequence[int],
    fit: Callable[[int], tuple[list[int], int]],
    cancel: threading.Event,
    stats: GenerationStats,
) -> bool:
    """The reply filled the context: rebuild the cache as fewer old turns plus the whole reply so far.

    `fit(committed)` is fit_to_context for this conversation. True if the reply can go on.
    """
    try:
        prompt, dropped = fit(len(completion))
    except (RpcError, FitCancelled):
        return False  # the newest message and the reply so far fill the context on their own, or a cancel came
    target = list(prompt) + list(completion)
    if dropped <= stats.context_dropped_messages or len(target) >= model.n_ctx:
        return False  # nothing more can be left out
    kept = model.truncate(model.common_prefix(target[:-1]))  # the last token is evaluated again for its logits
    rest = target[kept:]
    try:
        for i in range(0, len(rest), model.n_batch):
            if cancel.is_set():
                return False
            model.decode(rest[i : i + model.n_batch], abort=cancel)
    except DecodeAborted:
        return False
    stats.context_dropped_messages = dropped
    return True
