"""Several replies decoded together by the scheduler, in-process with the real starter model.

With one llama_decode call per sequence (the debug mode: batched kernels round
differently, so only then can outputs be compared byte for byte), prompts run all
at once give each prompt's solo output: sequences never see each other's tokens.
"""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from runtime.llama import generation
from runtime.llama.generation import GenerationRequest, plain_stepper
from runtime.llama.llama_model import LlamaModel, LoadSettings
from runtime.llama.sampling import Sampler, SamplingConfig
from runtime.gguf.reader import read_file_header
from runtime.job_slot import API, PROTOCOL
from runtime.scheduler.scheduler import MIN_AWAITED_PREFIX, ScheduledReply, Scheduler
from waiting import wait_until

GREEDY = SamplingConfig(temperature=0.0, top_p=1.0, top_k=40, seed=0)
PROMPTS = [
    "Write a haiku about the sea.",
    "List three prime numbers and explain why they are prime.",
    "What is the capital of Italy? Answer in one sentence.",
    "Write a Python function that adds two numbers.",
]


@pytest.fixture(scope="module")
def model(starter_model):
    settings = LoadSettings(path=str(starter_model), n_ctx=512, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=1, n_seq=4)
    llama = LlamaModel(settings, read_file_header(starter_model))
    llama.one_sequence_per_decode = True  # LOKAL_BATCH=single
    yield llama
    llama.close()


def chat(model, text):
    return model.tokenize(f"<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)


class Timeline:
    """When each reply's text arrived."""

    def __init__(self):
        self.lock = threading.Lock()
        self.events: list[tuple[float, int]] = []

    def on_text(self, i):
        def record(_text):
            with self.lock:
                self.events.append((time.perf_counter(), i))

        return record


def reply_for(model, i, max_tokens=24, timeline=None, cancel=None):
    request = GenerationRequest(prompt=chat(model, PROMPTS[i]), max_tokens=max_tokens, sampling=GREEDY, on_text=timeline.on_text(i) if timeline else (lambda t: None))
    if cancel is not None:
        request.cancel = cancel
    return ScheduledReply(request, plain_stepper, conversation_id=f"c{i}")


def run_all(scheduler, replies, timeout=300):
    for reply in replies:
        scheduler.submit(reply)
    for reply in replies:
        assert reply.done.wait(timeout), "a reply never finished"
        assert reply.error is None, reply.error
    return [r.outcome for r in replies]


def empty_seats(scheduler):
    for seat in scheduler.seats:
        seat.seq.clear()


def test_prompts_at_once_give_each_prompts_solo_output(model):
    scheduler = Scheduler(model)
    try:
        solo = []
        for i in range(len(PROMPTS)):
            empty_seats(scheduler)
            solo += run_all(scheduler, [reply_for(model, i)])
        empty_seats(scheduler)
        timeline = Timeline()
        together = run_all(scheduler, [reply_for(model, i, timeline=timeline) for i in range(len(PROMPTS))])
    finally:
        scheduler.close()
    for i, (a, b) in enumerate(zip(solo, together)):
        assert a.completion, f"prompt {i}: an empty reply proves nothing"
        assert b.completion == a.completion and b.text == a.text and b.finish_reason == a.finish_reason, f"prompt {i}"
    # They did stream together: every reply had text before any other reply was over.
    first = {i: min(t for t, j in timeline.events if j == i) for i in range(len(PROMPTS))}
    last = {i: max(t for t, j in timeline.events if j == i) for i in range(len(PROMPTS))}
    assert max(first.values()) < min(last.values())


def test_cancelling_one_reply_leaves_the_others_streaming(model):
    scheduler = Scheduler(model)
    try:
        empty_seats(scheduler)
        timeline = Timeline()
        cancel = threading.Event()
        replies = [reply_for(model, i, max_tokens=48, timeline=timeline, cancel=cancel if i == 1 else None) for i in range(3)]
        for reply in replies:
            scheduler.submit(reply)
        wait_until(lambda: any(j == 1 for _t, j in timeline.events), 120, "text from reply 1, the one to cancel")
        scheduler.cancel(replies[1])
        cancelled_at = time.perf_counter()
        for reply in replies:
            assert reply.done.wait(300)
    finally:
        scheduler.close()
    outcomes = [r.outcome for r in replies]
    assert outcomes[1].finish_reason == "cancelled"
    assert len(outcomes[1].completion) < 48
    for i in (0, 2):
        assert outcomes[i].finish_reason in ("stop", "length")
        assert any(t > cancelled_at for t, j in timeline.events if j == i) or outcomes[i].finish_reason == "stop", f"reply {i} stopped streaming"


class StatesSeen:
    """A SavedStates (scheduler.py) that notes, at each save, whether every reply in `replies` was out by then."""

    def __init__(self):
        self.replies: list[ScheduledReply] = []
        self.all_out_at_save: list[bool] = []

    def restore(self, model, prompt, stats, owner):
        return None

    def save(self, model, conversation_id, owner):
        self.all_out_at_save.append(all(r.done.is_set() for r in self.replies))


def test_replies_that_end_in_the_same_step_are_all_out_before_any_after_work(model, monkeypatch):
    """Four API clients sent together end together: the last one is not kept waiting for the others'
    after-work (their next turn's header, their saved state), which ran one after another before.
    The headers of replies that end together are evaluated in one llama_decode call, once both callers
    have sent them (Scheduler.follow_up: the template is rendered on the callers' threads)."""
    header = model.tokenize("<|im_end|>\n<|im_start|>user\n", add_bos=False, special=True)
    calls = []
    real_decode_slices = model.decode_slices
    monkeypatch.setattr(model, "decode_slices", lambda slices, **kw: (calls.append([(s.seq.seq_id, list(s.tokens)) for s in slices]), real_decode_slices(slices, **kw))[1])
    states = StatesSeen()
    scheduler = Scheduler(model, states)
    try:
        empty_seats(scheduler)
        replies = [reply_for(model, i, max_tokens=6) for i in range(2)]
        for reply in replies:
            reply.follows_up = reply.saves_state = True
        states.replies = replies
        with scheduler._changed:  # admitted by one pass of the engine loop: they prefill, stream and end in the same steps
            for reply in replies:
                scheduler.submit(reply)
        for reply in replies:
            assert reply.done.wait(120) and reply.error is None
        assert not scheduler.wait_after_work(0), "the seats were freed before their follow-ups came"
        for reply in replies:
            scheduler.follow_up(reply, [*reply.request.prompt, *reply.outcome.completion, *header])
        assert scheduler.wait_idle(30)
        held = [list(scheduler.seats[r.seq_id].seq.tokens) for r in replies]
    finally:
        scheduler.close()
    assert [len(r.outcome.completion) for r in replies] == [6, 6] and [r.seq_id for r in replies] == [0, 1]
    assert states.all_out_at_save == [True, True]
    # Both headers in one call (with each reply's last token, which is never evaluated while it streams).
    assert calls[-1] == [(r.seq_id, [r.outcome.completion[-1], *header]) for r in replies]
    assert all(tokens == [*r.request.prompt, *r.outcome.completion, *header] for r, tokens in zip(replies, held))


def test_a_step_that_fails_ends_every_streaming_reply_through_fail_closing_its_sampler_and_sink(model, monkeypatch):
    """A bug in a decode step (llama.cpp's own errors are decode_step's) ends every streaming reply with it rather
    than hang, and each one ends as any reply does (ReplyRun.fail): its sampler freed, its figures final."""
    samplers, closed = [], []

    class Recorded(Sampler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            samplers.append(self)

        def close(self):
            closed.append(self)
            super().close()

    monkeypatch.setattr(generation, "Sampler", Recorded)
    real_decode_slices, steps = model.decode_slices, []

    def fails_at_the_fourth_step(slices, **kw):
        if slices:
            steps.append(len(slices))
        if len(steps) == 4 and slices:
            raise RuntimeError("a bug in the step")
        return real_decode_slices(slices, **kw)

    monkeypatch.setattr(model, "decode_slices", fails_at_the_fourth_step)
    scheduler = Scheduler(model)
    try:
        empty_seats(scheduler)
        replies = [reply_for(model, i, max_tokens=24) for i in range(2)]
        with scheduler._changed:  # admitted together: both stream when the step fails
            for reply in replies:
                scheduler.submit(reply)
        for reply in replies:
            assert reply.done.wait(120)
    finally:
        scheduler.close()
    assert [str(r.error) for r in replies] == ["a bug in the step"] * 2
    assert len(samplers) == 2 and closed == samplers
    assert all(r.stats.total_ms > 0 for r in replies)


def test_a_prompt_that_begins_like_another_sequences_cache_shares_its_cells(model):
    system = "<|im_start|>system\nYou are a patient teacher who explains things to children with short, friendly sentences.<|im_end|>\n"
    ask = lambda text: model.tokenize(system + f"<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)
    first, second = ask("Why is the sky blue?"), ask("Why do cats purr?")
    shared = next(i for i, (a, b) in enumerate(zip(first, second)) if a != b)
    assert shared >= 20
    scheduler = Scheduler(model)
    try:
        empty_seats(scheduler)
        cold = run_all(scheduler, [ScheduledReply(GenerationRequest(prompt=second, max_tokens=16, sampling=GREEDY), plain_stepper, conversation_id="cold")])[0]
        empty_seats(scheduler)
        run_all(scheduler, [ScheduledReply(GenerationRequest(prompt=first, max_tokens=4, sampling=GREEDY), plain_stepper, conversation_id="a")])
        warm = run_all(scheduler, [ScheduledReply(GenerationRequest(prompt=second, max_tokens=16, sampling=GREEDY), plain_stepper, conversation_id="b")])[0]
        seqs = [s.seq for s in scheduler.seats if s.conversation_id in ("a", "b")]
    finally:
        scheduler.close()
    assert len(seqs) == 2 and seqs[0] is not seqs[1]  # b got a seat of its own, a stays resident
    assert warm.stats.prompt_tokens_reused >= shared - 1 and warm.stats.prompt_tokens_evaluated <= len(second) - shared + 1
    assert warm.completion == cold.completion


def test_when_both_owners_ask_neither_holds_every_seat(starter_model):
    settings = LoadSettings(path=str(starter_model), n_ctx=512, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=1, n_seq=2)
    llama = LlamaModel(settings, read_file_header(starter_model))
    scheduler = Scheduler(llama)
    ask = lambda owner, conversation, i, n: ScheduledReply(GenerationRequest(prompt=chat(llama, PROMPTS[i]), max_tokens=n, sampling=GREEDY), plain_stepper, owner=owner, conversation_id=conversation)
    try:
        first = ask(PROTOCOL, "w", 0, 4)
        scheduler.submit(first)  # the window has asked: from now on it keeps a seat of its own
        assert first.done.wait(120)
        api = [ask(API, f"api-{i}", i, 200) for i in range(3)]
        for reply in api:
            scheduler.submit(reply)
        assert api[0].done.wait(240)
        late = ask(PROTOCOL, "w", 1, 4)
        scheduler.submit(late)  # comes while API replies wait
        for reply in api + [late]:
            assert reply.done.wait(240) and reply.error is None
    finally:
        scheduler.close()
        llama.close()
    # Of two seats the API held one at a time; the window's reply was admitted before the API reply that waited.
    assert api[1].admitted >= api[0].outcome.stats.total_ms / 1000 + api[0].submitted - 1e-3
    assert late.admitted < api[2].admitted


def test_prompts_sent_together_are_read_in_one_batch(model, monkeypatch):
    # Each request's prompt is rendered on its own thread (engine.py) before it is submitted; four API
    # clients at once had the first prompt read alone while the other three were still being rendered.
    scheduler = Scheduler(model, gather_s=60)
    # The engine thread holds the lock from here until it waits for more replies or has admitted the
    # first one: a second submit that gets in after this event shows which of the two it did.
    deciding = threading.Event()
    real_gather = scheduler._gather_a_new_wave

    def gather() -> None:
        if scheduler._waiting:
            deciding.set()
        real_gather()

    monkeypatch.setattr(scheduler, "_gather_a_new_wave", gather)
    batches = []
    real_decode_slices = model.decode_slices
    monkeypatch.setattr(model, "decode_slices", lambda slices, **kw: (batches.append(sorted(s.seq.seq_id for s in slices)), real_decode_slices(slices, **kw))[1])
    try:
        empty_seats(scheduler)
        first = reply_for(model, 0, max_tokens=1)
        with scheduler.arriving():  # the second's prompt is being rendered (or its request was taken in: Scheduler.expect)
            scheduler.submit(first)
            assert deciding.wait(30), "the engine never took up the first reply"
            second = reply_for(model, 1, max_tokens=1)
            scheduler.submit(second)
        for reply in (first, second):
            assert reply.done.wait(120) and reply.error is None, reply.error
    finally:
        scheduler.close()
    assert batches[0] == sorted([first.seq_id, second.seq_id]), "the first prompt was read alone, before the second came"


def test_a_reply_nothing_else_is_known_to_come_with_starts_at_once(model):
    # A lone request waited 10 ms for a quiet moment in case another came: every single client's first token paid it.
    scheduler = Scheduler(model, gather_s=60)
    try:
        empty_seats(scheduler)
        alone = reply_for(model, 0, max_tokens=1)
        scheduler.submit(alone)
        assert alone.done.wait(30) and alone.error is None, f"a lone reply waited for a wave (gather_s 60): {alone.error}"
        # A request taken in and given up before it was submitted (a bad request, say) holds no wave afterwards.
        scheduler.expect()()
        empty_seats(scheduler)
        after = reply_for(model, 1, max_tokens=1)
        scheduler.submit(after)
        assert after.done.wait(30) and after.error is None, after.error
    finally:
        scheduler.close()


def test_a_reply_waits_for_others_no_longer_than_the_bound(model):
    scheduler = Scheduler(model, gather_s=0.3)
    try:
        empty_seats(scheduler)
        waited = reply_for(model, 1, max_tokens=1)
        with scheduler.arriving():  # one whose prompt never gets rendered (a huge conversation, say)
            scheduler.submit(waited)
            assert waited.done.wait(30) and waited.error is None, waited.error
    finally:
        scheduler.close()
    assert 0.3 <= waited.admitted - waited.submitted < 30


LONG_SYSTEM = (
    "<|im_start|>system\nYou are a patient teacher who explains things to children with short, friendly sentences. "
    "You never use long words, you give one example for every idea, and you end each answer with a question that "
    "makes the child think a little further about what they have just learned. When a child is wrong, you say what "
    "was right in their answer first, and then you help them find the mistake themselves.<|im_end|>\n"
)


def test_replies_sent_together_with_one_long_prompt_read_it_once(model):
    # n choices of one request, or clients sending one document: the prompt is read for the first, the others share its cells.
    prompt = model.tokenize(LONG_SYSTEM + "<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)
    assert len(prompt) >= MIN_AWAITED_PREFIX
    # Its long message begins with the same system prompt: the others do not wait for all of it to be read.
    document = model.tokenize(LONG_SYSTEM + "<|im_start|>user\n" + " ".join(PROMPTS * 4) + "<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)
    assert len(document) > 2 * len(prompt) and next(i for i, (a, b) in enumerate(zip(prompt, document)) if a != b) >= MIN_AWAITED_PREFIX
    scheduler = Scheduler(model, gather_s=60)
    ask = lambda tokens, conversation: ScheduledReply(GenerationRequest(prompt=tokens, max_tokens=12, sampling=GREEDY), plain_stepper, owner=API, conversation_id=conversation)
    try:
        empty_seats(scheduler)
        solo = run_all(scheduler, [ask(prompt, "solo")])[0]
        empty_seats(scheduler)
        long_read = ask(document, "document")
        choices = [ask(prompt, f"c/{i}") for i in range(3)]
        later = ask(chat(model, PROMPTS[1]), "later")  # came after them: the seats the waiting choices need are theirs
        with scheduler.arriving():
            for reply in [long_read, *choices, later]:
                scheduler.submit(reply)
        for reply in [long_read, *choices, later]:
            assert reply.done.wait(120) and reply.error is None, reply.error
    finally:
        scheduler.close()
    read = [r.outcome.stats.prompt_tokens_evaluated for r in choices]
    assert read[0] == len(prompt) and read[1:] == [1, 1], read  # the others evaluate only the last token again, for its logits
    assert all(r.outcome.completion == solo.completion for r in choices)
    assert long_read.admitted <= choices[0].admitted < long_read.outcome.stats.ttft_ms / 1000 + long_read.submitted
    assert max(c.admitted for c in choices) < later.admitted


def test_a_reply_that_drops_its_cells_leaves_none_behind(model):
    # A scored prompt, or an API request's second choice (engine.py): their cells serve no later prompt.
    scheduler = Scheduler(model)
    scored = ScheduledReply(
        GenerationRequest(prompt=chat(model, PROMPTS[0]), max_tokens=1, sampling=GREEDY, logprobs=0, prompt_logprobs=True), plain_stepper, conversation_id="scored", drops_cells=True
    )
    written = ScheduledReply(GenerationRequest(prompt=chat(model, PROMPTS[1]), max_tokens=1, sampling=GREEDY), plain_stepper, conversation_id="written")
    try:
        empty_seats(scheduler)
        outcome = run_all(scheduler, [scored])[0]
        left = list(scheduler.seats[scored.seq_id].seq.tokens)
        run_all(scheduler, [written])
        kept = list(scheduler.seats[written.seq_id].seq.tokens)
    finally:
        scheduler.close()
    assert len(outcome.prompt_logprobs) == len(scored.request.prompt) - 1
    assert left == [] and kept  # a reply not scored rests with its cache
