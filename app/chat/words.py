"""What the window calls the speakers of a conversation and the ways a reply can end, in the user's language."""

from __future__ import annotations

from app.storage import store as st
from app.ui.language import Context

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
