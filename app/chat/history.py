"""Which part of a long conversation the window reads and sends: never the whole of it.

Sending: every message is at least two tokens of the prompt (the chat template's markers around its
role and text: ChatML, Llama 3 and Gemma spend 4 or more), so a model with a context of n_ctx tokens
can never keep more than its newest n_ctx / 2 messages; the runtime leaves out the oldest turns itself
(runtime/engine/context_window.py) and remembers where it cut, as an index into the messages it was
sent. The window sends the messages from `send_from`: the whole conversation until it has n_ctx
messages, then from a position that moves in steps of n_ctx / 2 messages, so the runtime's remembered
cut holds for that many messages at a time (and the window, the protocol line and the runtime handle
at most n_ctx messages, not a 100,000-turn history: encoding 3,400 messages took the GUI thread
50 ms). A step that moves leaves the old cut past the end of what is sent (the runtime keeps at most
3/4 of the context, far fewer messages than a step), so the runtime fits the conversation afresh once.

Showing: a conversation opens with its newest SHOWN_MESSAGES messages; Show earlier messages adds
as many again (one widget per message: opening 200,000 of them would freeze the window).
"""

from __future__ import annotations

SHOWN_MESSAGES = 100
# A remote endpoint's context is not known here: it is sent at most this many messages (send_from sends
# fewer than twice its limit), what Lokal's own API accepts (runtime/api/http.py MAX_MESSAGES) and above
# what LM Studio's and llama-server's clients send.
REMOTE_MAX_MESSAGES = 10_000
REMOTE_LIMIT = REMOTE_MAX_MESSAGES // 2
# The runtime takes at most 100,000 messages in one conversation (runtime/engine/context_window.py).
RUNTIME_MAX_MESSAGES = 100_000


MIN_TOKENS_PER_MESSAGE = 2


def most_kept(n_ctx: int) -> int:
    """The most messages a context of n_ctx tokens can hold."""
    return max(1, n_ctx // MIN_TOKENS_PER_MESSAGE)


def send_from(count: int, limit: int) -> int:
    """The position from which a conversation of `count` messages is sent, when at most the newest `limit`
    of them can matter: 0 below 2 x limit messages, else a multiple of `limit` that leaves `limit` to 2 x limit."""
    limit = max(1, min(limit, RUNTIME_MAX_MESSAGES // 2))
    if count < 2 * limit:
        return 0
    return (count - limit) // limit * limit
