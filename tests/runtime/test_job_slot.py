"""The engine's job slot: jobs of the protocol client and of the API take turns in the order they came."""

import threading

from runtime.job_slot import API, PROTOCOL, Job, JobSlot


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


def test_jobs_wait_for_each_other_in_the_order_they_came():
    slot = JobSlot()
    order: list = []
    releases = [threading.Event() for _ in range(3)]
    started = [threading.Event() for _ in range(3)]
    jobs = [Job("api-1", "chat.generate", API), Job(7, "chat.generate", PROTOCOL), Job("api-2", "chat.generate", API)]
    threads = [run_in_turn(slot, *args) for args in zip(jobs, [order] * 3, releases, started)]
    for index, expected in enumerate((["api-1"], ["api-1", 7], ["api-1", 7, "api-2"])):
        assert started[index].wait(5)
        assert order == expected and slot.running is jobs[index]
        releases[index].set()
    for thread in threads:
        thread.join(5)
    assert slot.jobs() == [] and slot.running is None


def test_a_job_cancelled_while_it_waits_leaves_the_line_without_running():
    slot = JobSlot()
    order: list = []
    hold = threading.Event()
    first = run_in_turn(slot, Job("api-1", "chat.generate", API), order, hold)
    waiting = Job(3, "chat.generate", PROTOCOL)
    second = run_in_turn(slot, waiting, order, threading.Event())
    assert slot.jobs(PROTOCOL) == [waiting]
    slot.cancel(waiting)
    second.join(5)
    assert not second.is_alive() and order == ["api-1"] and slot.jobs(PROTOCOL) == []
    hold.set()
    first.join(5)
