"""Several runtime processes write one runtime.log: every line lands once, in a file no bigger than the limit.

Before: each process's RotatingFileHandler rotated by the size of the file it held open, renaming the
file others were writing and deleting each other's backups, so lines went missing. The writers here are
real processes that log through runtime/log_files.start_logging, with a small size limit so that they
rotate often (and enough backups that the count alone never deletes one).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections import Counter

WRITERS = 4
LINES = 1500
MAX_BYTES = 16 * 1024

WRITER = r"""
import logging, sys
import runtime.log_files as log_files
log_files.MAX_BYTES = int(sys.argv[3])
log_files.BACKUPS = 1000
log_files.start_logging("runtime", "writer")
print("ready", flush=True)
sys.stdin.readline()  # all writers start together
log = logging.getLogger("writer")
for i in range(int(sys.argv[2])):
    log.info("line %s %05d %s", sys.argv[1], i, "x" * 60)
"""


def test_processes_sharing_the_runtime_log_lose_no_line(tmp_path):
    logs = tmp_path / "logs"
    env = {**os.environ, "LOKAL_LOG_DIR": str(logs)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, f"w{n}", str(LINES), str(MAX_BYTES)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for n in range(WRITERS)
    ]
    try:
        for w in writers:
            assert w.stdout.readline().strip() == "ready"
        for w in writers:
            w.stdin.write("go\n")
            w.stdin.flush()
        for w in writers:
            assert w.wait(300) == 0
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
                w.wait(30)

    files = [p for p in logs.iterdir() if re.fullmatch(r"runtime\.log(\.\d+)?", p.name)]
    seen = Counter()
    for path in files:
        assert path.stat().st_size <= MAX_BYTES + 512, f"{path.name} grew past the limit: {path.stat().st_size} bytes"
        seen.update(re.findall(r"line (w\d) (\d{5})", path.read_text(encoding="utf-8")))
    expected = {(f"w{n}", f"{i:05d}") for n in range(WRITERS) for i in range(LINES)}
    missing = expected - set(seen)
    assert not missing, f"{len(missing)} of {len(expected)} lines lost, e.g. {sorted(missing)[:5]}"
    assert not [line for line, count in seen.items() if count > 1]
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in files)  # what a user typed may be in them
