"""Decode speed of a runtime confined to fewer cores than the machine has, at its default thread count.

A runtime started under `taskset -c 0`, or in a container given one core of several, inherits that core mask;
one started by `docker run --cpus 1` inherits a cgroup's CPU quota. This runs the runtime process confined to
`--cores` cores (the first ones this process may use) or, as root, in a new cgroup with a quota of `--quota` CPUs,
loads the model without naming a thread count (or with `--threads`), and times greedy replies. Compare two
versions with bench/paired.py:

    .venv/bin/python bench/paired.py --baseline /path/to/old/checkout --rounds 3 \\
        --figure decode_tokens_per_s -- bench/confined_decode.py --cores 1

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.client import RuntimeClient  # noqa: E402
from runtime.models import wheels  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402

PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle. (variant {i})"


@contextlib.contextmanager
def cpu_quota(cpus: float) -> Iterator[None]:
    """This process (and what it starts from now on) in a new cgroup allowed `cpus` CPUs' worth of time."""
    period = 100_000
    v1 = Path("/sys/fs/cgroup/cpu")
    group = (v1 if v1.is_dir() else Path("/sys/fs/cgroup")) / f"lokal-bench-{os.getpid()}"
    try:
        group.mkdir()
    except OSError as exc:
        raise SystemExit(f"a CPU quota needs a cgroup of our own ({exc}): run as root on Linux") from None
    try:
        if v1.is_dir():
            (group / "cpu.cfs_period_us").write_text(str(period))
            (group / "cpu.cfs_quota_us").write_text(str(int(cpus * period)))
        else:
            (group / "cpu.max").write_text(f"{int(cpus * period)} {period}")
        (group / "cgroup.procs").write_text(str(os.getpid()))  # every thread of this process
        yield
    finally:
        (group.parent / "cgroup.procs").write_text(str(os.getpid()))
        group.rmdir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=None, help="how many cores the runtime may run on")
    parser.add_argument("--quota", type=float, default=None, help="CPUs' worth of time the runtime's cgroup allows (root)")
    parser.add_argument("--threads", type=int, default=None, help="a thread count to name (default: the runtime's choice)")
    parser.add_argument("--replies", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the starter model)")
    args = parser.parse_args()
    mask = sorted(os.sched_getaffinity(0))
    if args.cores is None and args.quota is None:
        raise SystemExit("name --cores, --quota or both")
    if args.cores is not None:
        if len(mask) <= args.cores:
            raise SystemExit(f"this process may run on {len(mask)} cores: confining it to {args.cores} tests nothing")
        os.sched_setaffinity(0, mask[: args.cores])  # the runtime process inherits it
    model = args.model or str(wheels.path_of(wheels.STARTER))
    with cpu_quota(args.quota) if args.quota is not None else contextlib.nullcontext():
        speeds = decode_speeds(model, args.threads, args.replies, args.tokens)
    print(json.dumps({"cores": args.cores, "quota_cpus": args.quota, "threads": args.threads, "machine_cores": len(mask), "model": os.path.basename(model),
                      "decode_tokens_per_s": statistics.median(speeds), "decode_tokens_per_s_each": speeds}, indent=2))


def decode_speeds(model: str, threads: int | None, replies: int, tokens: int) -> list[float]:
    client = RuntimeClient()
    try:
        client.initialize("bench")
        client.load_model(ModelLoadParams(path=model, n_ctx=1024, n_threads=threads))
        speeds = []
        for i in range(replies):
            params = ChatGenerateParams(f"c{i}", [ChatMessage("user", PROMPT.format(i=i))], max_tokens=tokens, temperature=0.0, speculation="off")
            speeds.append(client.chat(params, timeout=600).stats.decode_tokens_per_s)
        return speeds
    finally:
        client.close()


if __name__ == "__main__":
    main()
