"""Runs a command beside a neighbour that keeps cores busy for a while, then idle, and again, until the command ends.

A user's machine has other work that comes and goes (a browser, a build), and
that moves the pace of every pass the runtime times. Benchmarks here otherwise
run on a machine kept as quiet as it can be; this makes the coming and going
the same for every run, to see how a runtime's measured costs hold up under it.

    .venv/bin/python bench/neighbour.py [--busy 6] [--idle 6] [--cores 1] -- COMMAND [ARGS ...]

Exits with the command's exit status; the neighbour ends with it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading

BUSY_LOOP = "while True: pass"


def neighbour(busy_s: float, idle_s: float, cores: int, stop: threading.Event) -> None:
    while not stop.is_set():
        spinners = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(cores)]
        try:
            stop.wait(busy_s)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
        stop.wait(idle_s)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=float, default=6.0, help="seconds the neighbour keeps its cores busy each time")
    parser.add_argument("--idle", type=float, default=6.0, help="seconds it then leaves them idle")
    parser.add_argument("--cores", type=int, default=1, help="cores it keeps busy")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run beside it")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    if args.busy <= 0 or args.idle < 0 or args.cores < 1:
        parser.error("--busy must be above 0, --idle 0 or more, --cores 1 or more")
    stop = threading.Event()
    thread = threading.Thread(target=neighbour, args=(args.busy, args.idle, args.cores, stop), daemon=True)
    thread.start()
    try:
        return subprocess.run(command).returncode
    finally:
        stop.set()
        thread.join()


if __name__ == "__main__":
    sys.exit(main())
