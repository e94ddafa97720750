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

from runtime.engine.llama_model import DecodeAborted, LlamaModel
from runtime.protocol import ChatMessage, ErrorCode, GenerationStats, RpcError

REFILL_FRACTION = 0.75
REPLY_SHARE = 4  # at most 1/4 of the context is held back for the reply


def reply_room(n_ctx: int, max_tokens: int) -> int:
    return max(1, min(max_tokens, n_ctx // REPLY_SHARE))


def fit_to_context(
    messages: Sequence[ChatMessage],
    render: Callable[[list[ChatMessage]], list[int]],
    n_ctx: int,
    max_tokens: int,
    cuts: dict[str, int],
    conversation_id: str,
    committed: int = 0,
) -> tuple[list[int], int]:
    """(prompt tokens, messages left out). `cuts` remembers each conversation's cut across turns.

    `committed`: tokens of a reply already generated, which must fit after the prompt too.
    """
    messages = list(messages)
    room = reply_room(n_ctx, max_tokens) + committed
    lead = 0
    while lead < len(messages) - 1 and messages[lead].role == "system":
        lead += 1
    system, history = messages[:lead], messages[lead:]
    # Where a cut may go: before a user message, or just before the newest message.
    cut_points = [d for d in range(1, len(history)) if history[d].role == "user" or d == len(history) - 1]

    remembered = cuts.get(conversation_id, 0)
    if remembered and remembered not in cut_points:
        remembered = 0  # the conversation changed under the cut (edited, shortened): start over
    tokens = render(system + history[remembered:])
    if len(tokens) + room <= n_ctx:
        _remember(cuts, conversation_id, remembered)
        return tokens, remembered

    best: tuple[list[int], int] | None = None
    for d in cut_points:
        if d <= remembered:
            continue
        tokens = render(system + history[d:])
        if len(tokens) + room <= REFILL_FRACTION * n_ctx:
            best = (tokens, d)
            break
        if len(tokens) + committed < n_ctx:
            best = (tokens, d)  # fits, with less headroom: keep looking for the 3/4 mark
    if best is not None:
        _remember(cuts, conversation_id, best[1])
        return best[0], best[1]

    newest = history[-1:]
    tokens = render(newest)
    if len(tokens) + committed < n_ctx:
        _remember(cuts, conversation_id, 0)
        return tokens, len(messages) - 1
    raise RpcError(
        ErrorCode.CONTEXT_OVERFLOW,
        f"the last message alone is {len(tokens)} tokens long and does not fit the context of {n_ctx} tokens",
        {"prompt_tokens": len(tokens), "n_ctx": n_ctx},
    )


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
    except RpcError:
        return False  # the newest message and the reply so far fill the context on their own
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
