"""How many threads a decode runs on by default: the runtime's choice, and what the window says it will be."""

import os

import psutil


def default_threads() -> int:
    """A thread per physical core, and no more than the cores this process may run on (`taskset`, a container's
    cpuset). A decode's threads meet at a barrier after each layer: one thread more than the cores it gets waits
    a whole time slice there, and a reply beside two busy processes on 2 cores ran 7x slower (36.9 s against 5.3 s)."""
    cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):  # Linux; macOS and Windows have no per-process core mask to read here
        cores = min(cores, len(os.sched_getaffinity(0)))
    return max(1, cores)
