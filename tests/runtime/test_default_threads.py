"""The runtime decodes on a thread per core it may run on: a thread beyond them stalls every layer of a decode
(runtime/cores.py)."""

import os

from runtime.cores import default_threads


def test_threads_follow_the_cores_this_process_may_run_on(every_core):
    cores = sorted(every_core)
    assert default_threads() >= 2, "this machine has one physical core (psutil): narrowing the mask to one changes nothing; run it on two or more"
    os.sched_setaffinity(0, cores[:1])  # as `taskset -c 0 lokal` or a container's cpuset would
    assert default_threads() == 1
    os.sched_setaffinity(0, cores[:2])
    assert default_threads() == 2
