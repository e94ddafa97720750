"""ChatController: the chat logic between the widgets, the store and the runtime link.

Streaming: deltas land in a buffer and are appended to the message model on a
timer (one relayout per batch, not per token) whose pace follows what drawing the
reply costs the GUI thread (render_pace.py); the reply is written to
the store at least every CHECKPOINT_MS while it streams and once more when it
ends. Several conversations may each have a reply streaming at once (the runtime
decodes them together); one conversation has at most one. If the runtime dies
mid-reply the partial texts stay, marked interrupted, and the runtime link
restarts the process.

Replies come from the runtime link, or from another reply link set with
set_reply_link (a remote endpoint, app/remote): anything that answers
call(methods.CHAT_GENERATE, ChatGenerateParams, on_result(ChatGenerateResult),
on_error) with a call that has an `id`, cancel(call), and emits
sig_delta(request_id, text) and sig_reasoning_delta(request_id, text). Only
replies from the runtime need the local model (and its context size).

A thinking model's reasoning streams apart from its answer: it lands in the
message's `reasoning` (shown folded above the answer, never copied or sent as
the answer), and the time from its first token to the answer's first is the
reply's thinking time ("Thought for 12 s"). A reply cut by max_tokens or by a
full context can be continued: the runtime extends the same message in place
(continue_reply), and the store keeps it as one message.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance

from app.chat import export, history
from app.chat.conversation_model import ConversationListModel
from app.chat.message_model import MessageListModel
from app.chat.render_pace import FASTEST_MS, RenderPace
from app.chat.words import reply_error
from app.models.session import ModelChoice, ModelSession
from app.runtime_link import RuntimeLink
from app.storage import store as st
from app.storage.attachments import StoredAttachment, StoredCitation
from app.storage.reply_record import ReplyRecord
from app.storage.store import Conversation, DeletedBranch, Message, Store, StoreUnavailable
from runtime.protocol import (
    Attachment, ChatGenerateParams, ChatGenerateResult, ChatMessage, ErrorCode, Role, RpcError, SpeculationMode, methods,
)
from runtime.protocol.methods import Method

CHECKPOINT_MS = 1_000  # the issue allows 2 s; half of it leaves room for a busy event loop
STORE_RETRY_MS = 2_000  # while the disk refuses writes, kept message updates are tried again this often
TITLE_CHARS = 48
UNTITLED = "New chat"  # a new conversation's title in the store, before the window was translated
EXPORT_SUFFIX = {"md": ".md", "json": ".json"}
LAST_CONVERSATION = "last_conversation"  # the store's state key: the conversation on screen, opened again at the next start
THINKING_EXPANDED = "thinking_expanded"  # the store's state key: "1" when the user last unfolded a reply's thinking
Thinking = typing.Literal["on", "off"]

log = logging.getLogger("lokal.chat")
T = TypeVar("T")


class ReplyCall(Protocol):
    """A request a ReplyLink took: its id, which the link's deltas name."""

    @property
    def id(self) -> int | str: ...


class ReplyLink(Protocol):
    """Where replies come from: the runtime link, or a remote endpoint's (app/remote/chat_link.py); see the module docstring."""

    @property
    def sig_delta(self) -> SignalInstance: ...

    @property
    def sig_reasoning_delta(self) -> SignalInstance: ...

    def call(
        self, method: Method[ChatGenerateParams, ChatGenerateResult], params: ChatGenerateParams | None = None,
        on_result: Callable[[ChatGenerateResult], None] | None = None,
        on_error: Callable[[RpcError], None] | None = None, timeout_ms: int | None = None,
    ) -> ReplyCall: ...

    def cancel(self, call: Any) -> None: ...


@dataclass
class ConversationSettings:
    temperature: float = 0.7
    top_p: float = 0.95
    min_p: float = 0.05  # LM Studio's defaults for these two
    repeat_penalty: float = 1.1
    max_tokens: int | None = None  # None: until the model stops, within the context (as LM Studio and Ollama)
    n_ctx: int | None = None  # None: the model's load settings (Model ▸ Load settings…) decide
    seed: int | None = None
    speculation: SpeculationMode | None = None  # None: the model's load settings decide (Model ▸ Load settings…)
    thinking: Thinking | None = None  # a thinking model thinks before it answers; None: as its template does by default
    reasoning_budget: int | None = None  # thinking tokens before the answer must begin; None: no limit

    def thinking_params(self) -> dict[str, Any]:
        """What the runtime is told about thinking: enable_thinking for templates that take it, and the budget."""
        if self.thinking == "off":
            return {"enable_thinking": False, "reasoning_budget": 0}
        return {"enable_thinking": True if self.thinking == "on" else None, "reasoning_budget": self.reasoning_budget}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ConversationSettings":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Reply:
    call: ReplyCall | None  # None only while the link takes the request
    message_id: int
    conversation_id: str
    pending: str = ""
    text: str = ""
    saved_len: int = 0
    pending_reasoning: str = ""
    reasoning: str = ""
    saved_reasoning_len: int = 0
    thinking_since: float | None = None  # time.monotonic() at its first reasoning token
    thinking_ms: float = 0.0  # set when the answer begins (the window's own measure; the runtime's wins at the end)
    shown_thinking_ms: float = 0.0  # the value the message on screen has
    # Continue: what the message held before; the runtime's result is what it added to it.
    base_text: str = ""
    base_reasoning: str = ""
    base_thinking_ms: float = 0.0


class ChatController(QObject):
    sig_current_changed = Signal(object)  # Conversation | None
    sig_generating_changed = Signal(bool)
    sig_reply_finished = Signal(object)  # the finished Message
    sig_error = Signal(str, str)  # why a reply failed, in words; its conversation's id
    sig_deleted = Signal(object)  # (Conversation, messages) for an undo
    sig_reply_link_changed = Signal()
    sig_store_problem = Signal(object)  # StoreUnavailable while the database refuses work; None once it takes it again
    sig_refused = Signal(str)  # why what the user asked for cannot be done now (a reply is being written)
    sig_branch_deleted = Signal(object)  # a DeletedBranch, for an undo
    sig_revealed = Signal(int, list)  # a message id, now on screen in its branch, and the words searched for: the view scrolls to it
    sig_path_changed = Signal()  # another branch of the conversation on screen is shown (its last reply may be another)

    def __init__(self, store: Store, link: RuntimeLink, model_session: ModelSession, parent: QObject | None = None):
        super().__init__(parent)
        self.store = store
        self.runtime_link = link
        self.link: ReplyLink = link  # where replies come from now (set_reply_link)
        self.reply_model_name = ""  # the model named on replies that do not come from the runtime
        self.model_session = model_session  # the runtime's model: its context size, its name on replies
        self.conversations = ConversationListModel(self)
        self.messages = MessageListModel(self)
        self.current: Conversation | None = None
        self.replies: dict[str, Reply] = {}  # by conversation: the reply streaming in it
        self.default_settings = ConversationSettings()
        self.model_sampling: dict[str, Any] = {}  # the loaded model's recommended sampling, for new conversations (new_settings)
        # The flush timer's interval: a reply costly to draw is drawn less often (render_pace.py).
        self._pace = RenderPace(reading=lambda: getattr(self.link, "reading_cpu_s", 0.0))
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FASTEST_MS)
        self._flush_timer.timeout.connect(self._on_flush)
        self._checkpoint_timer = QTimer(self)
        self._checkpoint_timer.setInterval(CHECKPOINT_MS)
        self._checkpoint_timer.timeout.connect(self._on_checkpoint)
        self._store_retry_timer = QTimer(self)
        self._store_retry_timer.setInterval(STORE_RETRY_MS)
        self._store_retry_timer.timeout.connect(self.retry_store)
        store.on_problem_changed(self._on_store_problem)
        link.sig_delta.connect(self._on_delta)
        link.sig_reasoning_delta.connect(self._on_reasoning_delta)
        self.conversations.set_conversations(store.conversations())

    # ---- when the database refuses work ------------------------------------------
    def _stored(self, action: Callable[[], T]) -> T | None:
        """Run a store call; if the database refuses it, say so (what happened, what to do) and return None."""
        try:
            return action()
        except StoreUnavailable as problem:
            log.warning("the store refused a write: %s", problem)
            self.sig_store_problem.emit(problem)
            return None

    def _done(self, action: Callable[[], object]) -> bool:
        """Run a store call that returns nothing; False if the database refused it (reported as above)."""
        return self._stored(lambda: (action(), True)[1]) is not None

    def _on_store_problem(self, problem: StoreUnavailable | None) -> None:
        if problem is None:
            self._store_retry_timer.stop()
        elif not self._store_retry_timer.isActive():
            self._store_retry_timer.start()
        self.sig_store_problem.emit(problem)

    def retry_store(self) -> bool:
        """Write what the database refused before; True once nothing waits (the user's Retry, and a timer)."""
        return self.store.retry_deferred()

    # ---- where replies come from ------------------------------------------------
    @property
    def local_replies(self) -> bool:
        """Replies come from the window's runtime and its loaded model."""
        return self.link is self.runtime_link

    def set_reply_link(self, link: ReplyLink | None = None, model_name: str = "") -> bool:
        """Take replies from `link`, whose model is `model_name` (None: the runtime's again); refused while a reply streams."""
        if self.any_generating:
            return False
        link = link or self.runtime_link
        if link is not self.link:
            self.link.sig_delta.disconnect(self._on_delta)
            self.link.sig_reasoning_delta.disconnect(self._on_reasoning_delta)
            link.sig_delta.connect(self._on_delta)
            link.sig_reasoning_delta.connect(self._on_reasoning_delta)
            self.link = link
        self.reply_model_name = "" if link is self.runtime_link else model_name
        self.sig_reply_link_changed.emit()
        return True

    # ---- conversations -------------------------------------------------------
    @property
    def reply(self) -> Reply | None:
        """The reply streaming in the conversation on screen."""
        return self.replies.get(self.current.id) if self.current is not None else None

    @property
    def generating(self) -> bool:
        """A reply streams in the conversation on screen."""
        return self.reply is not None

    @property
    def any_generating(self) -> bool:
        return bool(self.replies)

    @property
    def needs_model(self) -> bool:
        """Replies come from the runtime, and no model is chosen for it: nothing can be sent yet."""
        return self.local_replies and self.model_session.wanted is None

    def reply_for_call(self, request_id: int | str) -> Reply | None:
        return next((r for r in self.replies.values() if r.call is not None and r.call.id == request_id), None)

    def untitled(self) -> set[str]:
        """The title a conversation has until its first message names it (in English, and in the window's language)."""
        return {UNTITLED, self.tr("New chat")}

    def new_conversation(self, title: str | None = None) -> Conversation | None:
        title = title or self.tr("New chat")
        settings = self.new_settings()
        conv = self._stored(lambda: self.store.create_conversation(title, settings=settings.to_dict()))
        if conv is None:
            return None
        self.conversations.upsert(conv)
        self.open(conv.id)
        return conv

    def open(self, conversation_id: str | None) -> None:
        conv = self._stored(lambda: self.store.conversation(conversation_id)) if conversation_id else None
        if self.current is not None and conv is not None and conv.id == self.current.id:
            return
        messages = self._stored(lambda: self.store.messages(conv.id, newest=history.SHOWN_MESSAGES)) if conv else []
        if messages is None:
            return  # unreadable now: stay where we are (the problem was reported)
        was_generating = self.generating
        self.current = conv
        self.messages.set_messages(messages)
        if self.reply is not None:
            self._flush(self.reply)  # back to a conversation that streams: show what came meanwhile
        self._stored(lambda: self.store.set_state(LAST_CONVERSATION, conv.id if conv else None))
        self.sig_current_changed.emit(conv)
        if self.generating != was_generating:
            self.sig_generating_changed.emit(self.generating)

    def open_last(self) -> None:
        """The window opens: show the conversation it showed when it closed, if it is still there (else none)."""
        last = self._stored(lambda: self.store.get_state(LAST_CONVERSATION))
        if last and self._stored(lambda: self.store.conversation(last)) is not None:
            self.open(last)
        else:
            self.sig_current_changed.emit(None)

    def has_earlier(self) -> bool:
        """The conversation on screen has older messages than those shown (a long one opens with its newest)."""
        return self.messages.has_earlier()

    def show_earlier(self) -> int:
        """Show up to SHOWN_MESSAGES more of the older messages; how many came."""
        if self.current is None or not self.has_earlier():
            return 0
        conv, first = self.current, self.messages.message(0).depth
        earlier = self._stored(lambda: self.store.messages(conv.id, before=first, newest=history.SHOWN_MESSAGES))
        if not earlier:
            return 0
        self.messages.prepend(earlier)
        return len(earlier)

    def _on_screen(self) -> Conversation:
        """The conversation on screen, where the caller made sure there is one."""
        if self.current is None:
            raise RuntimeError("no conversation is open")
        return self.current

    def conversation(self, conversation_id: str | None = None) -> Conversation | None:
        """The conversation `conversation_id`, or the current one when None; None if there is none (or it cannot be read now)."""
        if conversation_id is None:
            return self.current
        return self._stored(lambda: self.store.conversation(conversation_id))

    def rename(self, conversation_id: str, title: str) -> None:
        title = title.strip()
        if not title:
            return
        if self._done(lambda: self.store.update_conversation(conversation_id, title=title)):
            self._refresh_conversation(conversation_id)

    def export_file_name(self, conversation_id: str, kind: str) -> str:
        """A file name for exporting the conversation as `kind` ("md" or "json"), from its title."""
        conv = self.conversation(conversation_id)
        title = conv.title if conv else ""
        safe = "".join(ch if ch.isalnum() or ch in " -_" else "_" for ch in title).strip() or "chat"
        return safe + EXPORT_SUFFIX[kind]

    def export(self, conversation_id: str, kind: str, path: str | Path) -> bool:
        """Write the conversation to `path` as Markdown ("md") or JSON ("json"); False if the store cannot give
        it now (reported as any store problem). A file that cannot be written raises OSError."""
        conv = self.conversation(conversation_id)
        messages = self._stored(lambda: self.store.messages(conversation_id)) if conv is not None else None
        if conv is None or messages is None:
            return False
        if kind == "md":
            text = export.to_markdown(conv, messages)
        else:
            on_path = {m.id for m in messages}
            every = self._stored(lambda: self.store.all_messages(conversation_id))
            if every is None:
                return False
            text = export.to_json(conv, messages, [m for m in every if m.id not in on_path])
        export.save(path, text)
        return True

    def thinking_expanded(self) -> bool:
        """Whether a reply's thinking shows unfolded: the user's last choice (folded until they unfold one)."""
        return self._stored(lambda: self.store.get_state(THINKING_EXPANDED)) == "1"

    def set_thinking_expanded(self, expanded: bool) -> None:
        self._stored(lambda: self.store.set_state(THINKING_EXPANDED, "1" if expanded else "0"))

    def end_all(self) -> None:
        """The window closes: save every reply in progress as stopped now, and have the runtime stop them (their answers are then ignored)."""
        for conversation_id in list(self.replies):
            self._end_now(conversation_id)

    def _end_now(self, conversation_id: str) -> None:
        reply = self.replies.get(conversation_id)
        if reply is None:
            return
        self._end_reply(reply, st.STOPPED, None)
        if reply.call is not None:
            self.link.cancel(reply.call)

    def delete(self, conversation_id: str) -> None:
        self._end_now(conversation_id)
        deleted = self._stored(lambda: self.store.delete_conversation(conversation_id))
        if deleted is None:
            return
        self.conversations.remove(conversation_id)
        if self.current is not None and self.current.id == conversation_id:
            self.open(None)
        if deleted is not None:
            self.sig_deleted.emit(deleted)

    def undo_delete(self, deleted: tuple[Conversation, list[Message]]) -> None:
        conv, messages = deleted
        if self._done(lambda: self.store.restore_conversation(conv, messages)):
            self._refresh_conversation(conv.id)
            self.open(conv.id)

    def new_settings(self) -> ConversationSettings:
        """A new conversation's settings: Lokal's defaults, with the sampling the loaded model's file recommends
        (its general.sampling.* keys, runtime/models/load_settings.sampling_defaults) in their place."""
        known = {f.name for f in dataclasses.fields(ConversationSettings)}
        recommended = {k: v for k, v in self.model_sampling.items() if k in known} if self.local_replies else {}
        return dataclasses.replace(self.default_settings, **recommended)

    def settings(self) -> ConversationSettings:
        return ConversationSettings.from_dict(self.current.settings) if self.current else self.default_settings

    def set_settings(self, system_prompt: str, settings: ConversationSettings) -> None:
        if self.current is None and self.new_conversation() is None:
            return
        conversation_id = self._on_screen().id
        if self._done(lambda: self.store.update_conversation(conversation_id, system_prompt=system_prompt, settings=settings.to_dict())):
            self._refresh_conversation(conversation_id)
        if self.local_replies:
            self.model_session.ensure_context(settings.n_ctx)  # the model is loaded again if the context size changed

    def _refresh_conversation(self, conversation_id: str) -> None:
        conv = self._stored(lambda: self.store.conversation(conversation_id))
        if conv is None:
            return
        self.conversations.upsert(conv)
        if self.current is not None and self.current.id == conversation_id:
            self.current = conv
            self.sig_current_changed.emit(conv)

    # ---- turns ---------------------------------------------------------------
    def send(self, text: str, attached: list[StoredAttachment] | None = None) -> bool:
        """Store the user's message (with the files `attached`, app/attachments) and start the reply; False if it
        could not be stored (nothing changed then)."""
        text = text.strip()
        attached = list(attached or [])
        if (not text and not attached) or self.generating:
            return False
        if self.current is None and self.new_conversation() is None:
            return False
        conv = self._on_screen()
        msg = self._stored(lambda: self.store.add_message(conv.id, "user", text, attached=attached))
        if msg is None:
            return False
        if len(self.messages.messages) == 0 and conv.title in self.untitled():
            title = " ".join((text or ", ".join(a.name for a in attached)).split())
            self._stored(lambda: self.store.update_conversation(conv.id, title=title[:TITLE_CHARS] + ("…" if len(title) > TITLE_CHARS else "")))
        self.messages.append(msg)
        self._refresh_conversation(conv.id)
        self._start_reply()
        return True

    def stop(self) -> None:
        """Stop the reply of the conversation on screen."""
        if self.reply is not None and self.reply.call is not None:
            self.link.cancel(self.reply.call)

    def can_regenerate(self) -> bool:
        msgs = self.messages.messages
        return not self.generating and bool(msgs) and msgs[-1].role == "assistant"

    def regenerate(self) -> bool:
        """Write the last reply again, as a sibling of it: the earlier one stays a branch (◀ ▶ shows it again)."""
        if not self.can_regenerate():
            return False
        last = self.messages.messages[-1]
        # The path ends at the reply's parent for a moment: the prompt is that path, the new reply goes under it.
        if not self._done(lambda: self.store.set_selected_leaf(last.conversation_id, last.parent_id)):
            return False
        self.messages.truncate(len(self.messages.messages) - 1)
        self._start_reply()
        return True

    def can_edit_last(self) -> bool:
        """The last message the user wrote can be edited: there is one, and no reply is being written after it."""
        return not self.generating and any(m.role == "user" for m in self.messages.messages)

    def last_reply(self) -> Message | None:
        """The newest reply on screen (the metrics panel shows its figures)."""
        return next((m for m in reversed(self.messages.messages) if m.role == "assistant"), None)

    def edit_and_resend(self, row: int, text: str) -> bool:
        """Send an edited copy of the user message at `row`, as a sibling of it, and a new reply to it: the
        message as it was, and the replies after it, stay a branch (◀ ▶ shows them again)."""
        text = text.strip()
        if self.generating:
            self.sig_refused.emit(self.tr("Stop the reply first (Esc), then resend the edited message"))
            return False
        if not text or not 0 <= row < self.messages.rowCount():
            return False
        msg = self.messages.message(row)
        if msg.role != "user":
            return False
        edited = self._stored(lambda: self.store.add_message(msg.conversation_id, "user", text, parent_id=msg.parent_id))
        if edited is None:
            return False
        self.messages.truncate(row)
        self.messages.append(edited)
        self._start_reply()
        return True

    # ---- branches ----------------------------------------------------------------
    def _branch_refused(self) -> bool:
        """Branches change the path on screen, which a streaming reply is writing at the end of."""
        if self.generating:
            self.sig_refused.emit(self.tr("Stop the reply first (Esc), then switch or delete a branch"))
            return True
        return False

    def switch_branch(self, row: int, step: int) -> bool:
        """Show the sibling `step` places from the message at `row` (◀ is -1, ▶ is +1), and the newest path under it."""
        if self.current is None or not 0 <= row < self.messages.rowCount() or self._branch_refused():
            return False
        msg = self.messages.message(row)
        siblings = self._stored(lambda: self.store.siblings(msg.id)) or []
        at = next((i for i, m in enumerate(siblings) if m.id == msg.id), -1)
        if at < 0 or not 0 <= at + step < len(siblings):
            return False
        target = siblings[at + step]
        if self._stored(lambda: self.store.select_leaf_through(msg.conversation_id, target.id)) is None:
            return False
        self._show_path_from(row)
        return True

    def last_branch_row(self) -> int:
        """The row of the last message on screen that has siblings (what the keyboard's branch switch acts on); -1 if none."""
        rows = [row for row, m in enumerate(self.messages.messages) if m.branches > 1]
        return rows[-1] if rows else -1

    def switch_last_branch(self, step: int) -> bool:
        """Chat ▸ Previous/Next branch: switch at the last message on screen that has siblings."""
        row = self.last_branch_row()
        return row >= 0 and self.switch_branch(row, step)

    def delete_branch(self, row: int) -> bool:
        """Delete the message at `row` and every reply under it (undo: undo_delete_branch); the path moves to a sibling."""
        if self.current is None or not 0 <= row < self.messages.rowCount() or self._branch_refused():
            return False
        msg = self.messages.message(row)
        deleted = self._stored(lambda: self.store.delete_branch(msg.id))
        if deleted is None:
            return False
        self._show_path_from(row)
        self._refresh_conversation(msg.conversation_id)
        self.sig_branch_deleted.emit(deleted)
        return True

    def undo_delete_branch(self, deleted: DeletedBranch) -> None:
        if not self._done(lambda: self.store.restore_branch(deleted)):
            return
        if self.current is not None and self.current.id == deleted.conversation_id:
            self._show_path_from(0)
            self._refresh_conversation(deleted.conversation_id)
        else:
            self.open(deleted.conversation_id)

    def reveal_message(self, message_id: int, words: Sequence[str] = ()) -> bool:
        """Open the message's conversation on the branch that holds it, scrolled to it (a search result: `words`, what
        was searched for, are put in sight where the message is long and folded). False
        if there is no such message (deleted meanwhile) or a reply is being written in that conversation."""
        msg = self._stored(lambda: self.store.message(message_id))
        if msg is None:
            return False
        if msg.conversation_id in self.replies:
            self.sig_refused.emit(self.tr("Stop the reply first (Esc), then open another branch of this chat"))
            return False
        if self._stored(lambda: self.store.select_leaf_through(msg.conversation_id, message_id)) is None:
            return False
        if self.current is None or self.current.id != msg.conversation_id:
            self.open(msg.conversation_id)
        leaf_depth = (self._stored(lambda: self.store.message_count(msg.conversation_id)) or 1) - 1
        since = max(0, min(msg.depth, leaf_depth - history.SHOWN_MESSAGES + 1))
        path = self._stored(lambda: self.store.messages(msg.conversation_id, since=since))
        if path is None:
            return False
        self.messages.set_messages(path)
        self.sig_revealed.emit(message_id, list(words))
        return True

    def _show_path_from(self, row: int) -> None:
        """The selected path changed below `row`: show it from there on (the rows above are the same messages)."""
        conv = self._on_screen()
        since = self.messages.message(row).depth if row < self.messages.rowCount() else 0
        path = self._stored(lambda: self.store.messages(conv.id, since=since))
        if path is None:
            return
        self.messages.replace_from(row, path)
        self.sig_path_changed.emit()

    def _history(self, settings: "ConversationSettings") -> list[ChatMessage]:
        """The system prompt and the part of the conversation that can reach the model (app/chat/history.py)."""
        conv = self._on_screen()
        limit = history.most_kept(self._context_size(settings)) if self.local_replies else history.REMOTE_LIMIT
        count = self._stored(lambda: self.store.message_count(conv.id))
        start = history.send_from(count, limit) if count is not None else 0
        shown = self.messages.messages
        if shown and shown[0].depth <= start:
            turns = [(m.role, m.content, m.state, m.reasoning, m.attachments) for m in shown if m.depth >= start]  # all of it is on screen already
        else:
            stored = self._stored(lambda: self.store.turns(conv.id, since=start))
            # None: the database refuses reads now, so what is on screen.
            turns = stored if stored is not None else [(m.role, m.content, m.state, m.reasoning, m.attachments) for m in shown]
        if start > 0:
            first_user = next((i for i, turn in enumerate(turns) if turn[0] == "user"), len(turns) - 1)
            turns = turns[first_user:]  # what is sent opens with a user turn, as the runtime's own cuts do
        out = [ChatMessage("system", conv.system_prompt)] if conv.system_prompt.strip() else []
        # The messages table's CHECK constraint keeps its roles to the protocol's.
        # A reply's reasoning goes apart from its answer: the runtime gives it to templates that render it, else drops it.
        out += [
            ChatMessage(typing.cast(Role, role), content, reasoning=reasoning, attachments=[_wire(a) for a in files])
            for role, content, state, reasoning, files in turns if not (role == "assistant" and state == st.FAILED and not content)
        ]
        return out

    def _context_size(self, settings: "ConversationSettings") -> int:
        """The context the reply runs in: the model's as loaded for this conversation (ensure_context), else the conversation's own."""
        wanted = self.model_session.wanted
        if wanted is not None:
            return wanted.n_ctx
        return settings.n_ctx or ModelChoice.n_ctx

    def _branch_key(self, conversation_id: str) -> str:
        """Which saved KV state the reply extends: the branch on screen, named by the deepest message shown that
        has siblings; "" (the conversation's) without one. Each branch then keeps its own state in the runtime's
        KV store, so switching back to one restores it instead of evaluating it again."""
        forks = [m for m in self.messages.messages if m.branches > 1]
        return f"{conversation_id}/{forks[-1].id}" if forks else ""

    def _params(self, conv: Conversation) -> ChatGenerateParams:
        """The request for a reply in `conv` now: its history and its settings."""
        settings = ConversationSettings.from_dict(conv.settings)
        if self.local_replies:
            self.model_session.ensure_context(settings.n_ctx)
        params = ChatGenerateParams(
            conversation_id=conv.id,
            messages=self._history(settings),
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
            top_p=settings.top_p,
            min_p=settings.min_p,
            repeat_penalty=settings.repeat_penalty,
            seed=settings.seed,
            **settings.thinking_params(),
        )
        if self.local_replies:
            # The conversation's own setting, else the model's, as `lokal chat` and the benchmarks run it.
            params.speculation = settings.speculation or self.model_session.speculation
        return params

    def _start_reply(self) -> None:
        conv = self._on_screen()
        params = self._params(conv)
        model_name = self.model_session.display_name if self.local_replies else self.reply_model_name
        msg = self._stored(lambda: self.store.add_message(conv.id, "assistant", "", state=st.STREAMING, model=model_name))
        if msg is None:
            return  # the user's message is stored; Regenerate asks again once the database takes writes
        self.messages.append(msg)
        params.cache_key = self._branch_key(conv.id)
        self._launch(Reply(None, msg.id, conv.id), params)

    def can_continue(self) -> bool:
        """The last reply was cut (by max_tokens or a full context) and the runtime can extend it in place."""
        last = self.messages.messages[-1] if self.messages.messages else None
        return (
            not self.generating and self.local_replies and last is not None and last.role == "assistant"
            and last.state == st.COMPLETE and last.record is not None and last.record.finish_reason == "length"
        )

    def continue_reply(self) -> bool:
        """Extend the last reply where it was cut: the same message grows (the runtime continues from its live cache)."""
        if not self.can_continue():
            return False
        conv = self._on_screen()
        row = len(self.messages.messages) - 1
        last = self.messages.message(row)
        params = self._params(conv)
        params.continue_reply = True
        if not self._done(lambda: self.store.update_message(last.id, state=st.STREAMING)):
            return False
        self.messages.update(row, state=st.STREAMING)
        reply = Reply(
            None, last.id, conv.id, text=last.content, saved_len=len(last.content), reasoning=last.reasoning,
            saved_reasoning_len=len(last.reasoning), thinking_ms=last.thinking_ms, shown_thinking_ms=last.thinking_ms,
            base_text=last.content, base_reasoning=last.reasoning, base_thinking_ms=last.thinking_ms,
        )
        params.cache_key = self._branch_key(conv.id)
        self._launch(reply, params)
        return True

    def _launch(self, reply: Reply, params: ChatGenerateParams) -> None:
        conv_id = reply.conversation_id
        # The answer is this reply's only while it is the reply in progress: one that was ended already
        # (stopped for a closing window, a deleted conversation) has its late answer ignored.
        self.replies[conv_id] = reply
        reply.call = self.link.call(
            methods.CHAT_GENERATE, params,
            on_result=lambda outcome: self._on_reply_result(reply, outcome),
            on_error=lambda error: self._on_reply_error(reply, error),
        )
        if self.replies.get(conv_id) is not reply:
            return  # the link refused it at once; _on_reply_error said why
        if not self._flush_timer.isActive():
            self._pace.restart()
            self._flush_timer.setInterval(FASTEST_MS)
        self._flush_timer.start()
        self._checkpoint_timer.start()
        self.sig_generating_changed.emit(True)

    def _on_delta(self, request_id: int | str, text: str) -> None:
        reply = self.reply_for_call(request_id)
        if reply is not None and text:
            reply.pending += text
            if reply.thinking_since is not None and not reply.thinking_ms:  # the answer begins: the thinking is over
                reply.thinking_ms = (time.monotonic() - reply.thinking_since) * 1000

    def _on_reasoning_delta(self, request_id: int | str, text: str) -> None:
        reply = self.reply_for_call(request_id)
        if reply is not None and text:
            reply.pending_reasoning += text
            if reply.thinking_since is None:
                reply.thinking_since = time.monotonic()

    def _on_flush(self) -> None:
        self._flush_timer.setInterval(self._pace.tick())
        for reply in list(self.replies.values()):
            self._flush(reply)

    def _flush(self, reply: Reply) -> None:
        row = self._visible_row(reply)
        if reply.pending_reasoning:
            thought, reply.pending_reasoning = reply.pending_reasoning, ""
            reply.reasoning += thought
            if row >= 0:
                self.messages.append_reasoning(row, thought)
        if reply.thinking_ms != reply.shown_thinking_ms:
            reply.shown_thinking_ms = reply.thinking_ms
            if row >= 0:
                self.messages.update(row, thinking_ms=reply.thinking_ms)  # "Thinking…" becomes "Thought for 12 s"
        if not reply.pending:
            return
        chunk, reply.pending = reply.pending, ""
        reply.text += chunk
        if row >= 0:
            self.messages.append_text(row, chunk)

    def _visible_row(self, reply: Reply) -> int:
        if self.current is None or self.current.id != reply.conversation_id:
            return -1
        return self.messages.row_of_id(reply.message_id)

    def _on_checkpoint(self) -> None:
        for reply in list(self.replies.values()):
            text = reply.text + reply.pending
            if len(text) != reply.saved_len:
                self.store.update_message(reply.message_id, content=text)
                reply.saved_len = len(text)
            reasoning = reply.reasoning + reply.pending_reasoning
            if len(reasoning) != reply.saved_reasoning_len:
                self.store.update_message(reply.message_id, reasoning=reasoning, thinking_ms=reply.thinking_ms)
                reply.saved_reasoning_len = len(reasoning)

    def _in_progress(self, reply: Reply) -> bool:
        """The answer is this reply's only while it is in progress: one ended already (stopped for a closing
        window, a deleted conversation) has its late answer ignored."""
        return self.replies.get(reply.conversation_id) is reply

    def _on_reply_result(self, reply: Reply, outcome: ChatGenerateResult) -> None:
        if not self._in_progress(reply):
            return
        state = st.STOPPED if outcome.finish_reason == "cancelled" else st.COMPLETE
        if outcome.stats.thinking_ms:  # the runtime's measure, from its first reasoning token to the block's end
            reply.thinking_ms = reply.base_thinking_ms + outcome.stats.thinking_ms
        reasoning = reply.base_reasoning + outcome.reasoning if outcome.reasoning else None  # None: what streamed
        cited = [StoredCitation(c.attachment_id, c.name, c.chunk, c.where, c.text, c.page, c.last_page, c.first_line, c.last_line)
                 for c in outcome.citations]
        if cited and self._done(lambda: self.store.save_citations(reply.message_id, cited)):
            row = self._visible_row(reply)
            if row >= 0:
                self.messages.update(row, citations=cited)
        self._end_reply(reply, state, ReplyRecord(outcome.stats, outcome.finish_reason), text=reply.base_text + outcome.text, reasoning=reasoning)

    def _on_reply_error(self, reply: Reply, error: RpcError) -> None:
        if not self._in_progress(reply):
            return
        if error.code == ErrorCode.RUNTIME_DIED:
            self._end_reply(reply, st.INTERRUPTED, ReplyRecord(error="the runtime stopped during this reply"))
        else:
            reason = reply_error(error)
            self._end_reply(reply, st.FAILED, ReplyRecord(error=reason))
            self.sig_error.emit(reason, reply.conversation_id)

    def _end_reply(self, reply: Reply, state: str, record: ReplyRecord | None, text: str | None = None, reasoning: str | None = None) -> None:
        if not self._in_progress(reply):
            return
        if reply.thinking_since is not None and not reply.thinking_ms:  # it ended while still thinking
            reply.thinking_ms = (time.monotonic() - reply.thinking_since) * 1000
        self._flush(reply)
        del self.replies[reply.conversation_id]
        if not self.replies:
            self._flush_timer.stop()
            self._checkpoint_timer.stop()
        final = text if text is not None else reply.text
        thought = reasoning if reasoning is not None else reply.reasoning
        # Kept and retried if refused.
        self.store.update_message(reply.message_id, content=final, state=state, record=record, reasoning=thought, thinking_ms=reply.thinking_ms)
        self._stored(lambda: self.store.update_conversation(reply.conversation_id, touch=True))
        row = self._visible_row(reply)
        if row >= 0:
            self.messages.update(row, content=final, state=state, record=record, reasoning=thought, thinking_ms=reply.thinking_ms)
        self._refresh_conversation(reply.conversation_id)
        finished = self._stored(lambda: self.store.message(reply.message_id))
        if self.current is not None and self.current.id == reply.conversation_id:  # the conversation on screen
            self.sig_generating_changed.emit(False)
            if finished is not None:
                self.sig_reply_finished.emit(finished)


def _wire(attachment: StoredAttachment) -> Attachment:
    """What a message carries to the runtime: the stored file's id (its bytes and text are in the runtime's store)."""
    kind: typing.Literal["document", "image"] = "image" if attachment.kind == "image" else "document"
    return Attachment(kind, attachment.id, attachment.name, attachment.mime)
