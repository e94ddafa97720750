"""glibc's malloc tunables the benches start a process with.

The dynamic loader reads GLIBC_TUNABLES once, at a process's start, so a tunable is set in the environment a child
is started with, never in a running process. This module imports only `typing`, which bench/lockstep_host.py
loads anyway: its numpy-free hosts load this module too, and must load nothing more than they compare.
"""

from __future__ import annotations

from typing import Iterable, Mapping

# Every large allocation asks for transparent huge pages as it is made.
HUGE_PAGES = "glibc.malloc.hugetlb=1"
# Every allocation of 4 KiB or more gets pages of its own.
OWN_PAGES = "glibc.malloc.mmap_threshold=4096"
# Every thread allocates from the main arena.
MAIN_ARENA_ONLY = "glibc.malloc.arena_max=1"


def environment(base: Mapping[str, str], tunables: Iterable[str]) -> dict[str, str]:
    """`base` with exactly these tunables: none it carried of its own (a caller's GLIBC_TUNABLES must not leak in)."""
    env = {k: v for k, v in base.items() if k != "GLIBC_TUNABLES"}
    chosen = list(tunables)
    if chosen:
        env["GLIBC_TUNABLES"] = ":".join(chosen)
    return env
