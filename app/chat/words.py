"""What the window calls the speakers of a conversation and the ways a reply can end, in the user's language."""

from __future__ import annotations

from PySide6.QtCore import QLocale

from app.chat.long_text import Fold
from app.metrics.figures import number
from app.metrics.figures import tokens as tokens_text
from app.runtime_link.error_words import said
from app.storage import store as st
from app.ui.language import Context
from runtime.protocol import ContextOverflow, RpcError

Messages = Context("Messages")


def speaker_name(role: str) -> str:
    return {"user": Messages.tr("You"), "assistant": Messages.tr("Assistant"), "system": Messages.tr("System")}.get(role, role)


def state_badge(state: str) -> str:
    """The badge on a reply that did not end normally; empty for one that did."""
    return {
        st.INTERRUPTED: Messages.tr("Interrupted: the runtime stopped"),
        st.STOPPED: Messages.tr("Stopped"),
        st.FAILED: Messages.tr("Failed"),
    }.get(state, "")


def state_word(state: str) -> str:
    """The same, as one word after a heading: 'Assistant (stopped)'."""
    return {st.STOPPED: Messages.tr("stopped"), st.INTERRUPTED: Messages.tr("interrupted"), st.FAILED: Messages.tr("failed")}.get(state, state)


def thinking_caption(thinking: bool, thinking_ms: float) -> str:
    """The thinking block's title: 'Thinking…' while the model thinks, then 'Thought for 12 s' (Open WebUI's words)."""
    if thinking:
        return Messages.tr("Thinking…")
    if thinking_ms <= 0:
        return Messages.tr("Thoughts")  # an old reply, or one cut before its thinking was timed
    seconds = thinking_ms / 1000
    return Messages.tr("Thought for {seconds} s").format(seconds=QLocale().toString(seconds, "f", 1 if seconds < 10 else 0))


def cut_note(context_full: bool) -> str:
    """Under a reply that did not end on its own: why it stopped where it did (the Continue button goes on)."""
    if context_full:
        return Messages.tr("The reply was cut: the context is full.")
    return Messages.tr("The reply was cut at its length limit.")


def fold_summary(folded: Fold) -> str:
    """Between the first and last lines of a long message of yours: what is not shown."""
    if folded.hidden_lines:
        return Messages.tr("⋯ %Ln more line(s)", None, folded.hidden_lines)
    return Messages.tr("⋯ long lines cut")


def whole_summary(folded: Fold) -> str:
    return Messages.tr("%Ln line(s)", None, folded.lines)


def meter_words(tokens: int, used: int, n_ctx: int, max_tokens: int | None) -> tuple[str, bool]:
    """Under the message box: the message's size in tokens, and whether it warns. A message needs room for the reply
    beside it (runtime/engine/context_window.py: min(max_tokens, n_ctx / 4)); past what the conversation has left, its
    oldest turns are left out; past the whole context, it cannot be sent as a message."""
    size = tokens_text(tokens)
    reply_room = min(max_tokens or n_ctx, n_ctx // 4)
    if tokens + reply_room > n_ctx:
        return Messages.tr("{size}: more than this model's context of {n_ctx} holds with room to answer. Attach it as a file "
                           "instead: the parts your question needs are found in it.").format(size=size, n_ctx=number(n_ctx)), True
    if used + tokens + reply_room > n_ctx:
        return Messages.tr("{size}: the oldest messages will be left out of the context to make room").format(size=size), True
    return size, False


def reply_error(error: RpcError) -> str:
    """Why a reply failed, in words the user can act on where Lokal knows what helps."""
    overflow = ContextOverflow.of(error)
    if overflow is None:
        return said(error)
    attach = Messages.tr(
        "Attach the text as a file instead (the paperclip, or drop the file on the message box): a file too long for the "
        "context is searched for the parts your question needs.")
    if overflow.n_ctx_train and overflow.prompt_tokens >= overflow.n_ctx_train:  # no larger context would hold it
        needs = Messages.tr("This message needs {tokens} tokens of context, more than this model can read at once ({limit}).").format(
            tokens=number(overflow.prompt_tokens), limit=number(overflow.n_ctx_train))
        return f"{needs} {attach}"
    needs = Messages.tr("This message needs {tokens} tokens of context, and this conversation has {n_ctx}.").format(
        tokens=number(overflow.prompt_tokens), n_ctx=number(overflow.n_ctx))
    if overflow.n_ctx_train > overflow.n_ctx:
        larger = Messages.tr("Or give the conversation a larger context, up to {limit} tokens (Ctrl+,).").format(limit=number(overflow.n_ctx_train))
    else:
        larger = Messages.tr("Or give the conversation a larger context (Ctrl+,).")
    return f"{needs} {attach} {larger}"
