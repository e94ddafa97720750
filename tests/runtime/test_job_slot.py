"""The engine's line of jobs: replies run together, a model load or unload alone, all in the order they came."""

import collections
import threading

from runtime.job_slot import API, PROTOCOL, CancelEvent, Job, JobSlot
from waiting import wait_until


class WatchedCondition(threading.Condition):
    """The slot's condition, counting how often each thread has gone (back) to waiting on it.

    A job that did not start when the line changed is shown by its thread waiting again after the change:
    it had its turn to look and stayed in line. (Waiting a fixed time for it *not* to start proves nothing.)"""

    def __init__(self) -> None:
        super().__init__()
        self.waits: collections.Counter[int] = collections.Counter()

    def wait(self, timeout: float | None = None) -> bool:
        self.waits[threading.get_ident()] += 1  # the lock is held here
        return super().wait(timeout)


def watched_slot() -> tuple[JobSlot, WatchedCondition]:
    slot = JobSlot()
    slot._changed = watched = WatchedCondition()  # before any job joins: nothing waits on the old one
    return slot, watched


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
    slot, watched = watched_slot()
    order: list = []
    jobs = [Job("api-1", "chat.generate", API), Job(7, "chat.generate", PROTOCOL), Job(8, "model.load", PROTOCOL), Job("api-2", "chat.generate", API)]
    releases = [threading.Event() for _ in jobs]
    started = [threading.Event() for _ in jobs]
    threads = [run_in_turn(slot, *args) for args in zip(jobs, [order] * len(jobs), releases, started)]
    assert started[0].wait(5) and started[1].wait(5)  # two replies at once
    assert sorted(map(str, order)) == ["7", "api-1"] and slot.would_wait(jobs[2]) and slot.would_wait(jobs[3])
    load, api_2 = threads[2].ident, threads[3].ident
    wait_until(lambda: watched.waits[load] and watched.waits[api_2], 5, "the load and the reply after it waiting in line")

    def looked_again(job: int, since: int):
        """After the line changed: the job started, or its thread looked and went back to waiting."""
        ident = threads[job].ident
        return wait_until(lambda: started[job].is_set() or watched.waits[ident] > since, 5, f"job {jobs[job].request_id} looking at the line again")

    seen = [watched.waits[load], watched.waits[api_2]]
    releases[0].set()
    threads[0].join(5)
    looked_again(2, seen[0])
    looked_again(3, seen[1])
    assert not started[2].is_set(), "the load started while a reply before it ran"

    seen = watched.waits[api_2]
    releases[1].set()
    assert started[2].wait(5)
    looked_again(3, seen)  # woken by the last reply before the load leaving, while the load starts
    assert not started[3].is_set(), "a reply started during the load"
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
