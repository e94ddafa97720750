"""A long conversation's render and fit hold up no other reply, and a cancel stops them (issue #33).

In-process, with the real engine, scheduler and starter model. The renders of one
conversation wait at a gate the test opens: a render as slow as the test needs,
so the order of events is certain on any machine (how long the preparations take
is bench/long_requests.py's figure, not this test's).
"""

from __future__ import annotations

import concurrent.futures
import threading

import pytest

from runtime.engine.engine import QUICK_PREPARE_MESSAGES, Engine
from runtime.job_slot import CancelEvent
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams

pytestmark = pytest.mark.slow


class GatedEngine(Engine):
    """The engine, with the renders of conversation `gated` waiting at `gate`."""

    def __init__(self) -> None:
        super().__init__()
        self.gated = ""
        self.gate = threading.Event()
        self.rendering = threading.Event()
        self.renders = 0

    def hold(self, conversation_id: str) -> None:
        self.gated = conversation_id
        self.gate.clear()
        self.rendering.clear()
        self.renders = 0

    def render(self, params, messages, add_generation_prompt, use=None):
        if params.conversation_id == self.gated:
            self.renders += 1
            self.rendering.set()
            assert self.gate.wait(300), "the test never opened the gate"
        return super().render(params, messages, add_generation_prompt, use)


@pytest.fixture(scope="module")
def engine(starter_model):
    engine = GatedEngine()
    engine.load(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=2, n_threads=1))
    yield engine
    engine.gate.set()
    engine.unload()


@pytest.fixture
def threads():
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        yield pool


def one_letter_messages(n):
    """Issue #33's request: n one-letter user and assistant turns, and a question."""
    return [ChatMessage("user" if i % 2 == 0 else "assistant", "a") for i in range(n - 1)] + [ChatMessage("user", "Say hello.")]


def test_a_small_request_streams_while_a_long_one_is_being_prepared(engine, threads):
    engine.hold("long")
    # A wave of prompts that waited for every reply still being prepared would wait for the long one's
    # whole render: the bound on that wait is set far beyond this test's, so only order decides.
    gather_s, engine.scheduler.gather_s = engine.scheduler.gather_s, 600
    events: list[str] = []
    small_streams = threading.Event()

    def on_small_text(_text):
        events.append("small text")
        small_streams.set()

    long_params = ChatGenerateParams("long", one_letter_messages(50_000), max_tokens=2, temperature=0.0)
    assert len(long_params.messages) > QUICK_PREPARE_MESSAGES
    long = threads.submit(engine.generate, long_params, CancelEvent(), lambda _text: events.append("long text"), "long")
    assert engine.rendering.wait(60), "the long request's render never started"
    small = threads.submit(engine.generate, ChatGenerateParams("small", [ChatMessage("user", "Say hello.")], max_tokens=4, temperature=0.0), CancelEvent(), on_small_text, "small")
    streamed = small_streams.wait(120)
    engine.gate.set()
    assert streamed, "the small request waited for the long one's preparation"
    long_result, small_result = long.result(120), small.result(120)
    engine.scheduler.gather_s = gather_s
    assert events[0] == "small text", events
    assert small_result.stats.completion_tokens > 0
    assert long_result.stats.context_dropped_messages > 49_000 and long_result.finish_reason in ("stop", "length"), long_result


def test_a_cancel_stops_the_preparation_where_it_is(engine, threads):
    engine.hold("cancelled")
    cancel = CancelEvent()
    prepared = threads.submit(engine.generate, ChatGenerateParams("cancelled", one_letter_messages(50_000), max_tokens=8), cancel, lambda _text: None, "cancelled")
    assert engine.rendering.wait(60), "the render never started"
    cancel.set()  # as chat.cancel, or an API client hanging up, does
    engine.gate.set()
    result = prepared.result(60)
    assert result.finish_reason == "cancelled" and result.text == ""
    assert engine.renders == 1, "it went on rendering after the cancel"
    assert engine.scheduler.wait_idle(30)  # nothing of it reached the scheduler
