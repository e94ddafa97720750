"""bench/collapse_pages.py: which mappings a collapse asks for, and a real collapse of a filled anonymous block."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from collapse_pages import HUGE_PAGE, MIN_BYTES, huge_bytes_in, large_anonymous_blocks, whole_huge_pages  # noqa: E402

MAPS = """\
55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1311 /usr/bin/python3.11
55d0c2000000-55d0c9000000 rw-p 00000000 00:00 0 [heap]
7f0000000000-7f0010000000 rw-p 00000000 00:00 0
7f0010000000-7f0010100000 rw-p 00000000 00:00 0
7f0020000000-7f0030000000 r--p 00000000 00:00 0
7f0030000000-7f0040000000 rw-s 00000000 00:01 77 /dev/zero (deleted)
7f0040000000-7f0080000000 r--p 00000000 08:01 99 /root/model.gguf
7f0100001000-7f0105000000 rw-p 00000000 00:00 0
"""


def test_only_large_private_writable_anonymous_mappings_are_asked():
    assert large_anonymous_blocks(MAPS) == [(0x7F0000000000, 0x7F0010000000), (0x7F0100001000, 0x7F0105000000)]


def test_a_block_is_cut_to_the_whole_huge_pages_inside_it():
    assert whole_huge_pages(0x7F0100001000, 0x7F0105000000) == (0x7F0100200000, 0x7F0105000000)
    assert whole_huge_pages(0x1000, 0x2000) == (HUGE_PAGE, HUGE_PAGE)  # none: an empty range, never a negative one


def test_huge_bytes_are_counted_only_in_the_blocks_asked():
    smaps = """\
7f0000000000-7f0010000000 rw-p 00000000 00:00 0
Size:             262144 kB
AnonHugePages:     20480 kB
VmFlags: rd wr mr mw me ac
7f0010000000-7f0010100000 rw-p 00000000 00:00 0
Size:               1024 kB
AnonHugePages:      2048 kB
"""
    assert huge_bytes_in([(0x7F0000000000, 0x7F0010000000)], smaps) == 20480 * 1024


FILL_AND_COLLAPSE = f"""
import json, mmap, sys
sys.path.insert(0, {str(BENCH)!r})
from collapse_pages import collapse_large_blocks
block = mmap.mmap(-1, {MIN_BYTES + 8 * HUGE_PAGE}, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
block.seek(len(block) // 2)  # its first half never touched: the kernel refuses those ranges, not the rest
block.write(b"x" * (len(block) // 2))
print(json.dumps(collapse_large_blocks().__dict__))
"""


def test_the_filled_part_of_an_anonymous_block_ends_in_huge_pages():
    done = subprocess.run([sys.executable, "-c", FILL_AND_COLLAPSE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["asked_bytes"] >= MIN_BYTES
    assert report["error"] is None, report
    assert (MIN_BYTES + 8 * HUGE_PAGE) // 2 - HUGE_PAGE <= report["huge_bytes"] <= (MIN_BYTES + 8 * HUGE_PAGE) // 2 + HUGE_PAGE, (
        f"{report}: the kernel did not collapse the filled half of the block into huge pages, and only it. This needs Linux 6.1 or newer (MADV_COLLAPSE) with transparent "
        "huge pages built in (/sys/kernel/mm/transparent_hugepage/enabled present, not [never]): run it on such a machine"
    )
