"""Move a loaded model's large anonymous blocks into 2 MiB pages (Linux), after the load rather than during it.

For bench/lockstep_host.py's `+collapse` hosts: would the runtime's decode step gain by it? Measured level at one
thread (docs/benchmarks/lockstep_host_huge_pages_threads_1.json), so the runtime does not do it.

A decode step on the CPU reads every weight once; in 4 KiB pages a 1 GiB model is a quarter of a million pages,
and the TLB holds a few thousand, so each step walks page tables all the way through. Most kernels leave
transparent huge pages to `madvise`, and llama.cpp does not ask for them. Asking at allocation time (glibc's
`glibc.malloc.hugetlb=1`) made the first load twice as slow (docs/benchmarks/huge_pages_threads_1.json): the
kernel zeroes and may compact memory for each huge page as the load first touches it. `MADV_COLLAPSE`
(Linux 6.1) instead copies blocks already filled into huge pages, once, when asked: the load runs as before,
and the copy took 1.3-2.0 s for 650 MiB of Qwen2.5-Coder-1.5B's here.

Only anonymous private mappings of at least `MIN_BYTES` are asked: llama.cpp's CPU buffers (repacked weights,
KV cache, compute buffer). The model file's own mapping is the page cache's, shared with other processes. A
refusal (an older kernel, no free 2 MiB blocks) leaves the pages as they were.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import time
from errno import EINVAL, ENOMEM
from dataclasses import dataclass

MADV_COLLAPSE = 25  # <linux/mman.h>, Linux 6.1
HUGE_PAGE = 2 << 20
MIN_BYTES = 64 << 20  # llama.cpp's buffers for even the smallest model are larger; Python's own arenas are far smaller


@dataclass(frozen=True)
class Collapse:
    asked_bytes: int  # in whole huge pages inside the blocks found
    huge_bytes: int  # AnonHugePages of those blocks afterwards
    seconds: float
    error: str | None  # the first refusal's reason, if any


def large_anonymous_blocks(maps: str, min_bytes: int = MIN_BYTES) -> list[tuple[int, int]]:
    """(start, end) of each private, writable, anonymous mapping of at least min_bytes in a /proc/PID/maps text."""
    blocks = []
    for line in maps.splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        perms, inode = fields[1], fields[4]
        named = len(fields) > 5  # a file, or [heap], [stack] and the like
        if perms.startswith("rw") and perms.endswith("p") and inode == "0" and not named and end - start >= min_bytes:
            blocks.append((start, end))
    return blocks


def whole_huge_pages(start: int, end: int) -> tuple[int, int]:
    """The 2 MiB-aligned part of [start, end): what a collapse can turn into huge pages."""
    first = -(-start // HUGE_PAGE) * HUGE_PAGE
    last = end // HUGE_PAGE * HUGE_PAGE
    return first, max(first, last)


def huge_bytes_in(blocks: list[tuple[int, int]], smaps: str) -> int:
    """AnonHugePages, in bytes, of the mappings in /proc/PID/smaps that start at one of blocks' starts."""
    starts = {start for start, _ in blocks}
    total, inside = 0, False
    for line in smaps.splitlines():
        head = line.split(None, 1)[0] if line else ""
        if "-" in head and not head.endswith(":"):
            inside = int(head.split("-")[0], 16) in starts
        elif inside and head == "AnonHugePages:":
            total += int(line.split()[1]) * 1024
    return total


def collapse_large_blocks() -> Collapse | None:
    """Ask the kernel to collapse this process's large anonymous blocks into huge pages; None where that cannot apply.

    One 2 MiB range at a time: the kernel gives up on a whole range at its first unfilled huge page (EINVAL),
    and an unfilled one is better left so (collapsing it would allocate memory nothing uses yet).
    """
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    with open("/proc/self/maps") as f:
        blocks = large_anonymous_blocks(f.read())
    started, asked, error = time.perf_counter(), 0, None
    for start, end in blocks:
        first, last = whole_huge_pages(start, end)
        for page in range(first, last, HUGE_PAGE):
            asked += HUGE_PAGE
            if libc.madvise(page, HUGE_PAGE, MADV_COLLAPSE) == 0:
                continue
            errno = ctypes.get_errno()
            if errno == EINVAL:  # an unfilled range, or a kernel older than 6.1 (which says so of every range, at once)
                continue
            error = error or os.strerror(errno)
            if errno == ENOMEM:  # no free 2 MiB blocks: the kernel would try compacting memory again for every range
                break
    seconds = time.perf_counter() - started
    with open("/proc/self/smaps") as f:
        huge = huge_bytes_in(blocks, f.read())
    return Collapse(asked_bytes=asked, huge_bytes=huge, seconds=seconds, error=error)
