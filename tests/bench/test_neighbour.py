"""bench/neighbour.py: a command runs beside cores kept busy and idle in turn, and the neighbour ends with it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

NEIGHBOUR = Path(__file__).resolve().parents[2] / "bench" / "neighbour.py"

# Counts the neighbour's busy loops (its children running BUSY_LOOP), then exits with 3.
COUNT_SPINNERS = """
import os, sys, time, psutil
time.sleep(0.5)
parent = psutil.Process(os.getppid())
print(sum(1 for child in parent.children() if child.pid != os.getpid() and "while True: pass" in " ".join(child.cmdline())))
sys.exit(3)
"""


def test_the_command_runs_beside_the_busy_cores_and_its_exit_status_is_returned():
    done = subprocess.run(
        [sys.executable, str(NEIGHBOUR), "--busy", "5", "--idle", "1", "--cores", "2", "--", sys.executable, "-c", COUNT_SPINNERS],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == "2"


def test_no_busy_loop_outlives_the_command():
    import psutil

    done = subprocess.run([sys.executable, str(NEIGHBOUR), "--busy", "30", "--", sys.executable, "-c", "print('ok')"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] and "while True: pass" in " ".join(p.info["cmdline"]) and p.ppid() == 1]
    assert not left, f"busy loops left behind: {left}"


def test_no_command_is_refused():
    done = subprocess.run([sys.executable, str(NEIGHBOUR), "--busy", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "give the command" in done.stderr


def test_a_neighbour_that_would_never_be_busy_is_refused():
    done = subprocess.run([sys.executable, str(NEIGHBOUR), "--busy", "0", "--", sys.executable, "-c", "print('ran')"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--busy must be above 0" in done.stderr and "ran" not in done.stdout
