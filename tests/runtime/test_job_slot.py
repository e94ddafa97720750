"""The engine's line of jobs: replies run together, a model load or unload alone, all in the order they came."""

import threading

from runtime.job_slot import API, PROTOCOL, CancelEvent, Job, JobSlot


def run_in_turn(slot: JobSlot, job: Job, order: list, release: threading.Event, started: threading.Event | None = None) -> threading.Thread:
    def body():
        if slot.wait_turn(job):
            order.append(job.request_id)
            if started is not None:
                started.set()
            release.wait(10)
        slot.leave(job)

    slot.join(job)
    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def test_replies_run_together_and_a_load_waits_for_those_before_it_and_holds_those_after_it():
    slot = JobSlot()
    order: list = []
    jobs = [Job("api-1", "chat.generate", API), Job(7, "chat.generate", PROTOCOL), Job(8, "model.load", PROTOCOL), Job("api-2", "chat.generate", API)]
    releases = [threading.Event() for _ in jobs]
    started = [threading.Event() for _ in jobs]
    threads = [run_in_turn(slot, *args) for args in zip(jobs, [order] * len(jobs), releases, started)]
    assert started[0].wait(5) and started[1].wait(5)  # two replies at once
    assert sorted(map(str, order)) == ["7", "api-1"] and slot.would_wait(jobs[2]) and slot.would_wait(jobs[3])
    releases[0].set()
    threads[0].join(5)
    assert not started[2].wait(0.2), "the load started while a reply before it ran"
    releases[1].set()
    assert started[2].wait(5)
    assert not started[3].wait(0.2), "a reply started during the load"
    releases[2].set()
    assert started[3].wait(5)
    releases[3].set()
    for thread in threads:
        thread.join(5)
    assert order[2:] == [8, "api-2"]
    assert slot.jobs() == [] and slot.running() == []


def test_a_job_cancelled_while_it_waits_leaves_the_line_without_running():
    slot = JobSlot()
    order: list = []
    hold = threading.Event()
    first = run_in_turn(slot, Job("load", "model.load", PROTOCOL), order, hold)
    waiting = Job(3, "chat.generate", PROTOCOL)
    second = run_in_turn(slot, waiting, order, threading.Event())
    assert slot.jobs(PROTOCOL)[-1] is waiting
    slot.cancel(waiting)
    second.join(5)
    assert not second.is_alive() and order == ["load"] and waiting not in slot.jobs(PROTOCOL)
    hold.set()
    first.join(5)


def test_a_cancel_tells_whoever_asked_to_be_told():
    told = []
    cancel = CancelEvent()
    cancel.on_set(lambda: told.append("first"))
    cancel.set()
    cancel.on_set(lambda: told.append("late"))  # already set: told at once
    assert told == ["first", "late"] and cancel.is_set()
